// SPDX-License-Identifier: MIT
// `commprof bench`: the nccl-tests style collective sweep (composed by
// src/program/command_list.cpp).
#pragma once

#include <memory>

#include "src/cli/command.hpp"

namespace commprof {

std::unique_ptr<Command> make_bench_command();

}  // namespace commprof
