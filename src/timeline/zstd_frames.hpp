// SPDX-License-Identifier: MIT
// The compressed rank file (rank-<R>.json.zst): the same text as rank-<R>.json, cut where the
// writer appends (the header, each step's line, the closing `]}`), each piece one zstd frame
// (RFC 8878) with its checksum. Concatenated frames are one zstd stream, so `zstd -d` gives
// the JSON file back; and since a step is appended by overwriting the closing frame with the
// step's frame and a new closing frame, a writer stopped mid-append leaves whole frames and one
// torn frame at the end, which the reader drops as it drops a torn line.
#pragma once

#include <string>
#include <string_view>

namespace commprof {

/// Whether `data` starts with a zstd frame (its magic number, 28 B5 2F FD).
bool starts_with_zstd_frame(std::string_view data);

/// `text` as one zstd frame with its content size and checksum.
std::string zstd_frame(std::string_view text);

/// The text of the whole, valid frames at the start of `data`, appended to `out`. Bytes after
/// them that are no whole valid frame (a torn last append) are dropped with a warning naming
/// `source`; where not even the first frame is whole, Error naming `source` and why.
void read_zstd_frames(std::string_view data, const std::string& source, std::string& out);

}  // namespace commprof
