// SPDX-License-Identifier: MIT
// `commprof run`: mock training steps of a workload on a backend (composed by
// src/program/command_list.cpp).
#pragma once

#include <memory>

#include "src/cli/command.hpp"

namespace commprof {

std::unique_ptr<Command> make_run_command();

}  // namespace commprof
