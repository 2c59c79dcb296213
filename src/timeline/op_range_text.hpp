// SPDX-License-Identifier: MIT
// The text of commprof's NVTX range around a COMM op: the op's name followed by a tag that says
// which collective ran on which communicator, of how many ranks, with how many bytes:
//
//   dp.bucket0.allreduce [coll=allreduce comm=dp1 size=2 bytes=1048576]
//
// and the range's payload (int64) is the collective's per-communicator sequence number (-1 for
// send/recv, which commprof does not number). Written by ScopedAnnotation (the CUDA backend's
// op ranges), read by `commprof import-nsys`, so an nsys export matches collectives across the
// ranks of every tp/dp/pp group exactly as commprof's own rank files do.
//
// Why the sequence number is the payload and not in the text: the text stays the same for every
// instance of an op, so nsys' own NVTX summaries (`nsys stats -r nvtx_sum`, the nvtx_* recipes),
// which group ranges by text, still give one row per op and communicator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace commprof {

/// The message of the range around the measured steps (after warm-up), in domain "commprof",
/// a registered string: `nsys profile --capture-range=nvtx
/// --nvtx-capture=measured_steps@commprof --capture-range-end=stop` records only those steps
/// (scripts/nsys-profile-rank.sh does this by default), and import-nsys takes it as the window.
inline constexpr const char* kMeasuredStepsRange = "measured_steps";

/// What a COMM op's range says beyond its name.
struct OpRangeTag {
  std::string collective;  ///< allreduce, allgather, ..., send, recv, sendrecv
  std::string comm;        ///< the communicator's name: world, tp0, dp1, pp0, ...
  int comm_size = 0;
  std::uint64_t bytes = 0;
  bool operator==(const OpRangeTag& o) const {
    return collective == o.collective && comm == o.comm && comm_size == o.comm_size &&
           bytes == o.bytes;
  }
};

/// `name [coll=C comm=N size=S bytes=B]`. Spaces, '[', ']' and '=' in the values (never in
/// commprof's own names) become '_', so the tag always parses back.
std::string format_op_range_text(const std::string& name, const OpRangeTag& tag);

struct ParsedOpRangeText {
  std::string name;               ///< the op's name (the whole text when there is no tag)
  std::optional<OpRangeTag> tag;  ///< none: a COMP or MEM range, or commprof before the tag
};
/// The inverse of format_op_range_text. A text without a well-formed tag (all four keys, a
/// positive size) is a name without a tag; keys it does not know are ignored, so later versions
/// may add some.
ParsedOpRangeText parse_op_range_text(const std::string& text);

}  // namespace commprof
