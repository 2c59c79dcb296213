// SPDX-License-Identifier: MIT
// Turning argv and the environment into a command and its options, before MPI starts. Pure:
// never prints, never exits, so every outcome is testable.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/cli/command.hpp"
#include "src/core/errors.hpp"

namespace commprof {

class RankContext;

struct ParseOutcome {
  enum class Kind { kRun, kHelp, kVersion, kUsageError };
  Kind kind = Kind::kUsageError;
  Command* command = nullptr;  ///< set for kRun (and for a command's --help)
  std::string text;            ///< help or version text, or the one-line error
  /// kRun: every option's effective value, one "name=value" line each, sorted: what the ranks
  /// compare before running (a COMMPROF_* variable set on one node only must not go unseen).
  std::string effective_options;
};

/// Collective (over `comm`): compares each rank's effective options with rank 0's; if any
/// rank differs, every rank throws ConfigError naming the first differing option, its value
/// on rank 0 and on the lowest differing rank.
class RankContext;
void agree_on_options(const RankContext& ctx, const std::string& effective_options);

/// Parses `commprof [--help|--version] <command> [options]`. Options may also come from
/// COMMPROF_<OPTION> variables in `environ`; the command line wins. On success the command is
/// configured. Errors say which option or value is wrong.
ParseOutcome parse_command_line(int argc, const char* const* argv,
                                const std::vector<std::unique_ptr<Command>>& commands,
                                const char* const* environ_vars);

/// "commprof <command>: error: " for an error of `command`'s options or run, "commprof: error: "
/// for the program's own (no or unknown command, ranks disagreeing) or where `command` is null.
/// The one place a message gets its prefix: errors carry only their reason.
std::string error_prefix(const Command* command, ErrorScope scope = ErrorScope::kCommand);

/// For the commands that work on one process (report and the importers): runs `work` on rank 0
/// only, prints an error it throws after the command's prefix (exit 1), and returns the same exit
/// code on every rank (the others wait for rank 0's).
int run_on_rank_zero(RankContext& ctx, const Command* command, const std::function<int()>& work);

/// The text of `commprof --version`.
std::string version_text();

}  // namespace commprof
