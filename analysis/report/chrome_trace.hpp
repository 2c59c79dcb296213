// SPDX-License-Identifier: MIT
// A merged timeline in the Trace Event Format (JSON object form) that Perfetto and
// chrome://tracing open: one process per rank ("rank R (host)"), one thread per stream, every op
// a complete ("X") event with its category and args bytes, flops, collective, comm, seq, step.
// Times are on rank 0's clock (each rank's clock_offset_ns applied), in µs with ns decimals.
#pragma once

#include <iosfwd>
#include <map>
#include <string>

#include "src/timeline/op_record.hpp"

namespace commprof {

/// Streams events as rank timelines arrive, so a trace of thousands of ranks never sits in
/// memory. Usage: ChromeTraceWriter w(os); w.add(t) for each rank; w.finish().
class ChromeTraceWriter {
 public:
  explicit ChromeTraceWriter(std::ostream& os);
  void add(const RankTimeline& timeline);
  /// Closes the JSON document; required once after the last add().
  void finish();

 private:
  void event_separator();
  std::ostream& os_;
  bool first_ = true;
};

}  // namespace commprof
