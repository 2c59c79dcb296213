// SPDX-License-Identifier: MIT
// What the rank-file readers share (internal to src/timeline/): the full simdjson reader, which
// names every problem, and the CPU check of the AVX2 build. Not part of the public interface.
#pragma once

#include <simdjson.h>

#include <string>

#include "src/timeline/op_record.hpp"

namespace commprof::detail {

/// Parses a whole rank file with simdjson On-Demand; throws Error naming `source` and the position.
RankTimeline parse_document(simdjson::padded_string_view text, const std::string& source);

/// Throws Error naming `path` when the reader was built for AVX2 and this CPU lacks it.
void check_reader_cpu(const std::string& path);

}  // namespace commprof::detail
