// SPDX-License-Identifier: MIT
// Each kind of communicator's share of a rank's step: the time its ops (collectives and
// point-to-point alike) kept the rank communicating, the part of that no compute hid, and for
// all-to-all(v) the bytes the rank received. A context-parallel ring's exposed time and an
// expert-parallel dispatch's imbalance are read from here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/interval_set.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {

/// "dp3" → "dp", "tp0_1" → "tp", "world" → "world": the kind of a communicator from its name.
std::string_view group_of(std::string_view comm);

/// Which way an MoE all-to-all moves tokens, told by its op name: "dispatch" for those that carry
/// rows to the experts (a name with the dot-separated word "dispatch", or "combine" followed by
/// "bwd": the combine's backward sends the rows' gradients the dispatch's way, with its splits),
/// "combine" for those that bring them back (the combine, the dispatch's backward); "" when the
/// name has neither word. "l3.dispatch.mb0" → dispatch, "l3.combine.bwd.mb0" → dispatch.
std::string_view alltoall_phase(std::string_view op_name);
/// "alltoall" or "alltoallv": the collectives with a phase, recv_bytes and bytes per peer.
bool is_alltoall(std::string_view collective);
/// The row of the group time table that holds `group`'s all-to-alls of `phase` alone:
/// "ep" and "dispatch" → "ep:dispatch".
std::string phase_group(std::string_view group, std::string_view phase);

/// One group's totals over a rank's steps with per-op timing. Times in ns, bytes in B. A group's
/// MoE all-to-alls are also counted, by phase, under phase_group's names ("ep:dispatch",
/// "ep:combine"): the dispatch's balance is not the combine's.
struct GroupTime {
  std::string group;
  std::int64_t comm_ns = 0;      ///< Σ per step of |∪ the group's COMM ops|
  std::int64_t exposed_ns = 0;   ///< Σ per step of |∪ the group's COMM ops \ ∪COMP|
  std::int64_t alltoalls = 0;    ///< all-to-all(v) calls on the group's communicators
  std::uint64_t recv_bytes = 0;  ///< Σ of those calls' recv_bytes (where the file records it)
  std::int64_t recv_calls = 0;   ///< the calls that recorded recv_bytes
};

/// Buffers add_group_times reuses from step to step: the step's spans of each group, by the
/// group's index in the `groups` it adds to, and whether the step had an op of it.
struct GroupScratch {
  std::vector<std::vector<Interval>> spans;
  std::vector<bool> touched;
};

/// Adds one step's ops to `groups` (one entry per group, created as groups appear). `comp` is
/// the step's union of COMP in canonical form (StepScratch::comp after compute_step_metrics).
void add_group_times(const StepView& step, const std::vector<Interval>& comp,
                     std::vector<GroupTime>& groups, GroupScratch& scratch);

}  // namespace commprof
