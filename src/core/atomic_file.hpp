// SPDX-License-Identifier: MIT
// Result files are written whole or not at all: a temporary file beside the target, flushed,
// then renamed over it. A rank that dies mid-write leaves at most a ".tmp" file behind, never a
// truncated result that a reducer would half-read.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

namespace commprof {

/// Calls `write` with a stream to a temporary file and renames it to `path` when `write`
/// returns and the data reached the disk. Throws Error naming the path on any I/O failure.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

/// Creates `dir` and its parents if needed; throws Error naming the directory on failure.
void ensure_directory(const std::string& dir);

}  // namespace commprof
