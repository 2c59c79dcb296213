// SPDX-License-Identifier: MIT
#include "analysis/group_time.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "analysis/saturating_sum.hpp"
#include "src/timeline/category.hpp"

namespace commprof {

std::string_view group_of(std::string_view comm) {
  std::size_t n = comm.size();
  while (n > 0 && (std::isdigit(static_cast<unsigned char>(comm[n - 1])) != 0 ||
                   comm[n - 1] == '_' || comm[n - 1] == '.' || comm[n - 1] == '-')) {
    --n;
  }
  return n == 0 ? comm : comm.substr(0, n);
}

namespace {

bool is_alltoall(std::string_view collective) {
  return collective == "alltoall" || collective == "alltoallv";
}

}  // namespace

void add_group_times(const StepView& step, const std::vector<Interval>& comp,
                     std::vector<GroupTime>& groups, GroupScratch& scratch) {
  // A handful of groups per step (dp, tp, pp, cp, ep): one pass over the ops per group, with
  // buffers kept from step to step, so a 20,000-op step allocates nothing once they have grown.
  const std::vector<OpView>& ops = *step.ops;
  scratch.seen.clear();
  for (const OpView& first : ops) {
    if (first.category != Category::kComm || first.comm.empty()) continue;
    const std::string_view g = group_of(first.comm);
    if (std::find(scratch.seen.begin(), scratch.seen.end(), g) != scratch.seen.end()) continue;
    scratch.seen.push_back(g);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const GroupTime& t) { return t.group == g; });
    if (it == groups.end()) {
      groups.push_back(GroupTime{std::string(g)});
      it = groups.end() - 1;
    }
    GroupTime& t = *it;
    std::vector<Interval>& mine = scratch.intervals;
    mine.clear();
    for (const OpView& op : ops) {
      if (op.category != Category::kComm || op.comm.empty() || group_of(op.comm) != g) continue;
      if (op.end_ns > op.start_ns) mine.push_back({op.start_ns, op.end_ns});
      if (is_alltoall(op.collective)) {
        ++t.alltoalls;
        if (op.recv_bytes > 0) {
          // Saturates, as the times do: a sum of absurd but valid counts stays at the limit.
          if (__builtin_add_overflow(t.recv_bytes, op.recv_bytes, &t.recv_bytes)) {
            t.recv_bytes = std::numeric_limits<std::uint64_t>::max();
          }
          ++t.recv_calls;
        }
      }
    }
    make_canonical(mine);
    const std::int64_t busy = total_length(mine);
    // Each step's time is bounded (±2^60 ns), but their sum over many steps of an adversarial
    // file is not (UBSan found that): saturating sums, as the reducer's.
    add_saturating(t.comm_ns, busy);
    add_saturating(t.exposed_ns, busy - intersection_length(mine, comp));
  }
}

}  // namespace commprof
