// SPDX-License-Identifier: MIT
// `commprof whatif DIR --scale ...`: a run's step graphs replayed with changed durations
// (composed by src/program/command_list.cpp).
#pragma once

#include <memory>

#include "src/cli/command.hpp"

namespace commprof {

std::unique_ptr<Command> make_whatif_command();

}  // namespace commprof
