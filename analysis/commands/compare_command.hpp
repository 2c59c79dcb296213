// SPDX-License-Identifier: MIT
// `commprof compare BASE NEW`: two runs' metrics side by side, gated by thresholds (composed by
// src/program/command_list.cpp).
#pragma once

#include <memory>

#include "src/cli/command.hpp"

namespace commprof {

std::unique_ptr<Command> make_compare_command();

}  // namespace commprof
