// SPDX-License-Identifier: MIT
// `commprof watch DIR...`: a live view of rank files that grow while a job runs (the NCCL
// profiler plugin's, rewritten every COMMPROF_PLUGIN_FLUSH_S; a run's, a step at a time)
// (composed by src/program/command_list.cpp).
#pragma once

#include <memory>

#include "src/cli/command.hpp"

namespace commprof {

std::unique_ptr<Command> make_watch_command();

}  // namespace commprof
