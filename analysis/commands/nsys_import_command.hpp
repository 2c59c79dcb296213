// SPDX-License-Identifier: MIT
// `commprof import-nsys`: nsys SQLite exports to rank files (composed by
// src/program/command_list.cpp).
#pragma once

#include <memory>

#include "src/cli/command.hpp"

namespace commprof {

std::unique_ptr<Command> make_import_nsys_command();

}  // namespace commprof
