// SPDX-License-Identifier: MIT
// Reading and writing rank-<R>.json: schema "commprof.rank", version 1.
//
// {
//   "schema": "commprof.rank", "version": 1,
//   "rank": 0, "world_size": 4, "local_rank": 0, "host": "node1", "device": "cpu",
//   "backend": "host", "clock_offset_ns": 0, "config": {...},
//   "units": {"time": "ns (host steady clock)", "bytes": "B", "flops": "FLOP"},
//   "steps": [{"index": 0, "warmup": true, "start_ns": ..., "end_ns": ...,
//              "ops": [{"name": "...", "category": "COMM", "stream": "COMM",
//                       "collective": "allreduce", "comm": "dp0", "comm_size": 2, "seq": 3,
//                       "bytes": 1048576, "flops": 0, "start_ns": ..., "end_ns": ...}]}]
// }
#pragma once

#include <iosfwd>
#include <string>

#include "src/timeline/op_record.hpp"

namespace commprof {

inline constexpr const char* kRankSchema = "commprof.rank";
inline constexpr int kRankSchemaVersion = 1;

void write_rank_json(std::ostream& os, const RankTimeline& timeline);
/// "<dir>/rank-<R>.json", written atomically.
std::string write_rank_file(const std::string& dir, const RankTimeline& timeline);

/// Parses a rank file. Untrusted input: any problem (not JSON, wrong schema or version, missing
/// or mistyped field, negative duration, unknown category) throws Error naming `source` and
/// where in it the problem is.
RankTimeline parse_rank_json(const std::string& text, const std::string& source);
RankTimeline read_rank_file(const std::string& path);

}  // namespace commprof
