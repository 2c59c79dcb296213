// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <vector>

#include "src/cli/command.hpp"

namespace commprof {

/// The whole program: parse, start MPI, agree across ranks, create the backend, run the
/// command, map errors to exit codes (see ExitCode). Called by main() with the program's
/// commands (src/program/command_list.cpp), in the order --help lists them.
int run_app(int argc, char** argv, const std::vector<std::unique_ptr<Command>>& commands);

}  // namespace commprof
