// SPDX-License-Identifier: MIT
// `commprof report`: the offline reducer over rank files (composed by
// src/program/command_list.cpp).
#pragma once

#include <memory>

#include "src/cli/command.hpp"

namespace commprof {

std::unique_ptr<Command> make_report_command();

}  // namespace commprof
