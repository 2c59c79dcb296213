// SPDX-License-Identifier: MIT
// The program's commands, composed above every layer: the only place that knows them all.
#pragma once

#include <memory>
#include <vector>

#include "src/cli/command.hpp"

namespace commprof {

/// Every command of the program, in the order --help lists them.
std::vector<std::unique_ptr<Command>> make_commands();

}  // namespace commprof
