// SPDX-License-Identifier: MIT
// `commprof gemm`: the GEMM probe on every rank's COMP stream (composed by
// src/program/command_list.cpp).
#pragma once

#include <memory>

#include "src/cli/command.hpp"

namespace commprof {

std::unique_ptr<Command> make_gemm_command();

}  // namespace commprof
