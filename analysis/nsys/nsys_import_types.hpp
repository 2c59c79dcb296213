// SPDX-License-Identifier: MIT
// What the nsys import hands on (each step as it completes, and a file's summary): the types
// alone, so that the activities' pass (nsys_activities.hpp) and the import (nsys_import.hpp) need
// not include each other.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "src/timeline/op_record.hpp"

namespace commprof {

/// What one file's import found, for the command's summary and the tests.
struct NsysFileSummary {
  std::string file;
  int rank = 0;
  std::string rank_source;  ///< "OMPI_COMM_WORLD_RANK", "file name", "file order", ...
  std::string host;
  bool commprof_nvtx = false;   ///< the file holds commprof's NVTX domain
  std::int64_t activities = 0;  ///< kernels + memcpys + memsets read
  std::int64_t kernels = 0;
  std::int64_t outside_steps = 0;   ///< activities launched outside every step (left out)
  std::int64_t ignored = 0;         ///< activities classified IGNORE (left out)
  std::int64_t ops[3] = {0, 0, 0};  ///< imported ops per category (index_of)
  /// commprof's COMM ranges whose collective, communicator and sequence number came from the
  /// range's tag (src/timeline/op_range_text.hpp), and those of older commprof derived from the
  /// op name (the communicator's kind only: "dp" for every dp group).
  std::int64_t comm_ranges_tagged = 0;
  std::int64_t comm_ranges_by_name = 0;
  int steps = 0;
  /// Neither commprof's markers nor --step-range: the whole capture, `capture_ns` from the first
  /// GPU activity to the end of the last, is the one step.
  bool whole_capture = false;
  std::int64_t capture_ns = 0;
  double seconds = 0.0;  ///< wall time of the import
};

/// Receives each imported step, in order, with the rank's header (a timeline without steps).
using NsysStepSink = std::function<void(const RankTimeline& header, StepRecord&& step)>;

}  // namespace commprof
