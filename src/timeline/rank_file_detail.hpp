// SPDX-License-Identifier: MIT
// What the rank-file readers share (internal to src/timeline/): the full simdjson reader, which
// names every problem, and the CPU check of the AVX2 build. Not part of the public interface.
#pragma once

#include <simdjson.h>

#include <string>

#include "src/timeline/op_record.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof::detail {

/// Parses a whole rank file with simdjson On-Demand; throws Error naming `source` and the position.
RankTimeline parse_document(simdjson::padded_string_view text, const std::string& source);

/// parse_document, and where that fails on a file whose last line is a torn step record (see
/// rank_file.hpp), parse_document of the file without that line: a warning then names `source`
/// and what was dropped. Throws parse_document's first error when that fails too.
RankTimeline parse_or_recover(simdjson::padded_string_view text, const std::string& source);

/// Throws Error naming `path` when the reader was built for AVX2 and this CPU lacks it.
void check_reader_cpu(const std::string& path);

/// The one-pass reader of stream_rank_file over [begin, end), which needs no padding: true when
/// the text is in the compact form and valid, every step then delivered to `sink` (end() not
/// called); false on anything else, the sink then holding part of the file. Where it returns
/// true, parse_document must return the same timeline (tests/fuzz checks that).
bool read_compact(const char* begin, const char* end, RankStepSink& sink);

}  // namespace commprof::detail
