// SPDX-License-Identifier: MIT
// The op timing a run asks for (--op-timing) and what it becomes: plain choices, so that a
// run's configuration can be read back without the executor that times the ops
// (workloads/execution/executor.hpp resolves them against the backends).
#pragma once

#include <string>

namespace commprof {

/// How ops are timed. kActivity: the device's own record of when each op's work ran (CUPTI
/// kernel, memcpy and memset records on cuda), nothing added to the streams: an op's time is
/// its kernels' time, as nsys shows it. kPair: a stamp (CUDA event) right before and right after
/// every op; the window then also holds the stamps' own cost and any wait for SMs before the
/// first kernel starts. kShared: consecutive ops on a stream share their boundary stamp (half
/// the events; an op's start is then its predecessor's end, which counts any idle gap between
/// them into the op). kStep: no per-op timing, only the step's end on each stream: the
/// uninstrumented baseline, whose records carry no ops. kSampled: activity on every k-th measured
/// step (and the last warm-up step), the device's recording paused on the others, whose records
/// carry no ops: per-op times from the timed steps, the step time from the plain ones, and the
/// difference between the two is what timing cost. kAuto is resolved before a run: sampled where
/// every rank's backend has activity records, else pair.
enum class OpTimingMode { kAuto, kActivity, kPair, kShared, kStep, kSampled };
OpTimingMode parse_op_timing(const std::string& text);
const char* op_timing_name(OpTimingMode t);
/// Whether `t` takes the device's activity records: activity and sampled need them, and auto
/// uses them where every rank has them. The backend is asked to record for these modes alone.
constexpr bool needs_activity(OpTimingMode t) {
  return t == OpTimingMode::kAuto || t == OpTimingMode::kActivity || t == OpTimingMode::kSampled;
}
/// What resolve_op_timing decides, without MPI: the mode, whether the request is refused (it
/// needs activity records some rank lacks) and whether auto fell back to pair.
struct OpTimingChoice {
  OpTimingMode mode = OpTimingMode::kAuto;
  bool refused = false;
  bool fell_back = false;
};
OpTimingChoice choose_op_timing(OpTimingMode requested, bool activity_everywhere);

}  // namespace commprof
