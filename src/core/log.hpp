// SPDX-License-Identifier: MIT
// Rank-aware logging. Rank 0 reports; other ranks speak only about problems.
//
// Every line goes to stderr prefixed "[rank R host]" (before MPI is up: "[commprof]").
// `info` prints on rank 0 only, `warn` and `error` on any rank, `debug` on every rank when the
// level is debug (--log-level debug or COMMPROF_LOG_LEVEL=debug). Reports (tables) are not log
// lines: they go to stdout through the report writers.
#pragma once

#include <sstream>
#include <string>

namespace commprof::log {

enum class Level { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

/// Sets who is speaking; called once the rank context knows rank and host.
void set_identity(int rank, const std::string& host);
/// "rank R (host)" for error messages, or "this process" before MPI is up.
std::string identity();
int rank();

void set_level(Level level);
Level level();
/// Parses "error", "warn", "info" or "debug"; throws ConfigError otherwise.
Level parse_level(const std::string& text);

void error(const std::string& message);
void warn(const std::string& message);
void info(const std::string& message);
void debug(const std::string& message);

/// Concatenates anything streamable: log::warn(log::cat("bad value ", v)).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

}  // namespace commprof::log
