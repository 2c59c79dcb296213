// SPDX-License-Identifier: MIT
// Typed errors and the documented exit codes. Thrown anywhere, caught once in main().
#pragma once

#include <stdexcept>
#include <string>

namespace commprof {

/// Process exit codes, documented in README.md.
enum ExitCode : int {
  kExitOk = 0,          ///< everything ran and every check passed
  kExitFailure = 1,     ///< a run failed: runtime error, verification mismatch (#wrong > 0)
  kExitUsage = 2,       ///< bad command line, environment or configuration
  kExitRegression = 3,  ///< `commprof compare`: a --fail-if threshold was crossed
  kExitProblems = 4,    ///< `commprof diagnose`: a problem was found
};

/// Base of every commprof error; `what()` is a complete, user-facing sentence.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  virtual int exit_code() const { return kExitFailure; }
};

/// What a usage error is about, which decides the prefix the CLI puts before it (messages carry
/// only the reason): one command's options ("commprof run: error: ...") or the job as a whole
/// ("commprof: error: ...": ranks disagreeing, no device for a rank).
enum class ErrorScope { kCommand, kProgram };

/// Bad input from the user: unknown option, malformed value, impossible configuration.
/// Always raised consistently on every rank (see RankContext::agree) so that no rank waits.
class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& what, ErrorScope scope = ErrorScope::kCommand)
      : Error(what), scope_(scope) {}
  int exit_code() const override { return kExitUsage; }
  ErrorScope scope() const { return scope_; }

 private:
  ErrorScope scope_;
};

/// A failed MPI call. The message names the call, file:line, rank and host.
class MpiError : public Error {
 public:
  using Error::Error;
};

/// A failed CUDA, cuBLAS or NCCL call. The message names the call, file:line, rank and host.
class DeviceError : public Error {
 public:
  using Error::Error;
};

/// A collective or operation that did not complete within --timeout.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

/// Formats "<what> failed at <file>:<line> on rank R (host): <detail>", the one shape every
/// vendor-boundary check uses.
std::string describe_failure(const char* what, const char* file, int line,
                             const std::string& detail);

}  // namespace commprof
