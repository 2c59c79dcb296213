// SPDX-License-Identifier: MIT
// Result files are written whole or not at all: a temporary file beside the target, written and
// closed without error, then renamed over it. A rank that dies mid-write, or a write that fails
// (disk full, a file-size limit, a read-only or vanished directory), leaves the previous file
// untouched and no temporary file behind; the error names the file and the system's reason.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

namespace commprof {

/// Calls `write` with a stream to a temporary file beside `path` and renames it to `path` once
/// every byte was written and the file closed without error. On failure (of the system, or an
/// exception from `write`) removes the temporary file, leaves `path` as it was and throws Error:
/// "cannot write '<path>': <strerror>; ...". A `path` that names a device, pipe or socket
/// (/dev/null, /dev/stdout, a FIFO) is written in place: renaming over it would replace it.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

/// Creates `dir` and its parents if needed; throws Error naming the directory on failure.
void ensure_directory(const std::string& dir);

/// ensure_directory, then proves that a file can be created in `dir` (creates and removes one),
/// so a read-only or foreign directory is refused before anything is measured. Throws Error
/// "cannot write in output directory '<dir>': <strerror>".
void ensure_writable_directory(const std::string& dir);

}  // namespace commprof
