// SPDX-License-Identifier: MIT
// commprof: see README.md. The commands are composed here, above every layer; run_app
// (src/cli/app.cpp) parses, starts MPI and runs the chosen one.
#include <mpi.h>

#include "src/cli/app.hpp"
#include "src/program/command_list.hpp"

// Asked by LeakSanitizer at exit (asan builds; nothing else calls it). Open MPI keeps memory
// until exit in components it has already unloaded, which no suppression can name, so a process
// that started MPI is not leak-checked; a command that ran without it (one reading files,
// started by hand) is. tests/support/mpi_test_main.cpp answers the same for the MPI gtests.
extern "C" int __lsan_is_turned_off() {
  int started = 0;
  MPI_Initialized(&started);
  return started;
}

int main(int argc, char** argv) { return commprof::run_app(argc, argv, commprof::make_commands()); }
