// SPDX-License-Identifier: MIT
// Standard output as a destination that can fail: redirected to a full disk, to /dev/full, or to
// a pipe whose reader is gone. A report that never arrived must not end with exit 0.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

namespace commprof {

/// Writes through `write` straight to file descriptor 1 (after flushing what std::cout holds),
/// and throws Error "cannot write <what> to standard output: <strerror>" when a write fails.
void write_to_stdout(const std::string& what, const std::function<void(std::ostream&)>& write);

/// Flushes std::cout and stdio's stdout; throws Error "cannot write to standard output:
/// <strerror>" when that, or an earlier write to them, failed. Called once before exit.
void check_stdout();

}  // namespace commprof
