// SPDX-License-Identifier: MIT
// `commprof diagnose DIR...`: one verdict per collective or transfer that did not complete on
// every rank, and the stragglers of a job that finished (composed by src/program/command_list.cpp).
#pragma once

#include <memory>

#include "src/cli/command.hpp"

namespace commprof {

std::unique_ptr<Command> make_diagnose_command();

}  // namespace commprof
