// SPDX-License-Identifier: MIT
// `commprof export-chakra DIR --out PREFIX`: one measured step as Chakra execution traces for
// ASTRA-sim, with its communicator groups and network (composed by src/program/command_list.cpp).
#pragma once

#include <memory>

#include "src/cli/command.hpp"

namespace commprof {

std::unique_ptr<Command> make_export_chakra_command();

}  // namespace commprof
