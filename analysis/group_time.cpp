// SPDX-License-Identifier: MIT
#include "analysis/group_time.hpp"

#include <cctype>
#include <string>
#include <utility>

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

std::string_view alltoall_phase(std::string_view op_name) {
  bool dispatch = false, combine = false;
  while (!op_name.empty()) {
    const std::size_t dot = op_name.find('.');
    const std::string_view word = op_name.substr(0, dot);
    op_name = dot == std::string_view::npos ? std::string_view() : op_name.substr(dot + 1);
    if (!dispatch && !combine) {
      dispatch = word == "dispatch";
      combine = word == "combine";
    } else if (word == "bwd") {
      std::swap(dispatch, combine);  // the backward runs the other way, with the other's splits
      break;
    }
  }
  return dispatch ? "dispatch" : combine ? "combine" : "";
}

std::string phase_group(std::string_view group, std::string_view phase) {
  std::string out(group);
  out += ':';
  out += phase;
  return out;
}

bool is_alltoall(std::string_view collective) {
  return collective == "alltoall" || collective == "alltoallv";
}

namespace {

// The index of `name` in `groups`, added (with its scratch) if new.
std::size_t group_index(std::string_view name, std::vector<GroupTime>& groups,
                        GroupScratch& scratch) {
  std::size_t i = 0;
  while (i < groups.size() && groups[i].group != name) ++i;
  if (i == groups.size()) {
    groups.push_back(GroupTime{std::string(name)});
    scratch.touched.push_back(false);
  }
  if (scratch.spans.size() <= i) scratch.spans.resize(i + 1);
  return i;
}

void add_op(const OpView& op, std::size_t i, std::vector<GroupTime>& groups,
            GroupScratch& scratch) {
  scratch.touched[i] = true;
  if (op.end_ns > op.start_ns) scratch.spans[i].push_back({op.start_ns, op.end_ns});
  GroupTime& t = groups[i];
  if (!is_alltoall(op.collective)) return;
  ++t.alltoalls;
  if (op.recv_bytes > 0) {
    // Saturates, as the times do: a sum of absurd but valid counts stays at the limit.
    add_saturating(t.recv_bytes, op.recv_bytes);
    ++t.recv_calls;
  }
}

}  // namespace

void add_group_times(const StepView& step, const std::vector<Interval>& comp,
                     std::vector<GroupTime>& groups, GroupScratch& scratch) {
  // One pass over the step's ops, each COMM op's span filed under its group (a handful: dp, tp,
  // pp, cp, ep), with buffers kept from step to step, so a 20,000-op step allocates nothing
  // once they have grown.
  for (std::vector<Interval>& s : scratch.spans) s.clear();
  scratch.touched.assign(groups.size(), false);
  for (const OpView& op : *step.ops) {
    if (op.category != Category::kComm || op.comm.empty()) continue;
    const std::string_view g = group_of(op.comm);
    add_op(op, group_index(g, groups, scratch), groups, scratch);
    if (!is_alltoall(op.collective)) continue;
    const std::string_view phase = alltoall_phase(op.name);
    if (phase.empty()) continue;
    // A name per MoE all-to-all: built only for those (a handful per layer and micro-batch).
    add_op(op, group_index(phase_group(g, phase), groups, scratch), groups, scratch);
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (!scratch.touched[i]) continue;
    std::vector<Interval>& mine = scratch.spans[i];
    make_canonical(mine);
    const std::int64_t busy = total_length(mine);
    // Each step's time is bounded (±2^60 ns), but their sum over many steps of an adversarial
    // file is not (UBSan found that): saturating sums, as the reducer's.
    add_saturating(groups[i].comm_ns, busy);
    add_saturating(groups[i].exposed_ns, busy - intersection_length(mine, comp));
  }
}

}  // namespace commprof
