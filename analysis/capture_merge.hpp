// SPDX-License-Identifier: MIT
// One rank's NCCL profiler plugin capture merged into a trace of the same job (a PyTorch
// profiler trace or an nsys export, imported): the trace knows the steps and the compute, the
// plugin every collective with its bytes, NCCL's algorithm, protocol and channels and its
// kernels' GPU times. The two clocks differ; the collectives both saw set them against each
// other: the trace's collectives in order are one run of the capture's calls (the same
// collective, and the same bytes where both say), and each matched pair's start on the
// capture's clock minus its start on the trace's is the offset between them (the median over
// the pairs; its largest departure is the residual).
#pragma once

#include <cstddef>

#include "src/timeline/op_record.hpp"

namespace commprof {

/// How one rank's capture met its trace.
struct CaptureMerge {
  int rank = -1;
  std::size_t trace_collectives = 0;  ///< the trace's collectives (its steps' COMM ops)
  std::size_t capture_calls = 0;      ///< the capture's calls
  std::size_t first_call = 0;         ///< the capture's call (in start order) matched to the first
  double offset_ns = 0;               ///< capture clock − trace clock: the median over the pairs
  double residual_ns = 0;             ///< the largest |a pair's difference − offset_ns|
};

/// `trace` with each of its collectives replaced by the capture's call matched to it, moved
/// onto the trace's clock: its steps, compute and copies stay the trace's. The capture's calls
/// outside the trace's steps are left out. Throws Error naming the rank and what differs where
/// the ranks differ, the trace has no collective, or no run of the capture's calls matches the
/// trace's collectives.
RankTimeline merge_capture_into_trace(const RankTimeline& capture, const RankTimeline& trace,
                                      CaptureMerge* how);

}  // namespace commprof
