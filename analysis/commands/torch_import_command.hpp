// SPDX-License-Identifier: MIT
#pragma once

#include <memory>

#include "src/cli/command.hpp"

namespace commprof {

std::unique_ptr<Command> make_import_torch_command();

}  // namespace commprof
