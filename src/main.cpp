// SPDX-License-Identifier: MIT
// commprof: see README.md. Everything happens in run_app (src/cli/app.cpp).
#include "src/cli/app.hpp"

int main(int argc, char** argv) { return commprof::run_app(argc, argv); }
