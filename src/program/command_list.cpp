// SPDX-License-Identifier: MIT
#include "src/program/command_list.hpp"

#include "analysis/commands/compare_command.hpp"
#include "analysis/commands/diagnose_command.hpp"
#include "analysis/commands/nsys_import_command.hpp"
#include "analysis/commands/report_command.hpp"
#include "analysis/commands/torch_import_command.hpp"
#include "analysis/commands/watch_command.hpp"
#include "collectives/commands/bench_command.hpp"
#include "workloads/commands/export_chakra_command.hpp"
#include "workloads/commands/gemm_command.hpp"
#include "workloads/commands/project_command.hpp"
#include "workloads/commands/run_command.hpp"
#include "workloads/commands/whatif_command.hpp"

namespace commprof {

std::vector<std::unique_ptr<Command>> make_commands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(make_run_command());
  commands.push_back(make_bench_command());
  commands.push_back(make_gemm_command());
  commands.push_back(make_report_command());
  commands.push_back(make_compare_command());
  commands.push_back(make_whatif_command());
  commands.push_back(make_watch_command());
  commands.push_back(make_diagnose_command());
  commands.push_back(make_export_chakra_command());
  commands.push_back(make_project_command());
  commands.push_back(make_import_nsys_command());
  commands.push_back(make_import_torch_command());
  return commands;
}

}  // namespace commprof
