// SPDX-License-Identifier: MIT
// commprof: see README.md. The commands are composed here, above every layer; run_app
// (src/cli/app.cpp) parses, starts MPI and runs the chosen one.
#include "src/cli/app.hpp"
#include "src/program/command_list.hpp"

int main(int argc, char** argv) { return commprof::run_app(argc, argv, commprof::make_commands()); }
