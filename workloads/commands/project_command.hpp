// SPDX-License-Identifier: MIT
// `commprof project`: a measured run's step predicted at another layout (composed by
// src/program/command_list.cpp).
#pragma once

#include <memory>

#include "src/cli/command.hpp"

namespace commprof {

std::unique_ptr<Command> make_project_command();

}  // namespace commprof
