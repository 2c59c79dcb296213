// SPDX-License-Identifier: MIT
#pragma once

namespace commprof {

/// The whole program: parse, start MPI, agree across ranks, create the backend, run the
/// command, map errors to exit codes (see ExitCode). Called by main().
int run_app(int argc, char** argv);

}  // namespace commprof
