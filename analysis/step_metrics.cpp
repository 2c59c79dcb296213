// SPDX-License-Identifier: MIT
#include "analysis/step_metrics.hpp"

#include <algorithm>
#include <array>

namespace commprof {

StepMetrics compute_step_metrics(const StepRecord& step, StepIntervals* intervals) {
  StepMetrics m;
  m.index = step.index;
  m.warmup = step.warmup;
  std::array<std::vector<Interval>, 3> by_category;
  std::vector<Interval> all;
  all.reserve(step.ops.size());
  std::int64_t lo = step.start_ns;
  std::int64_t hi = step.end_ns;
  for (const OpRecord& op : step.ops) {
    by_category[index_of(op.category)].push_back({op.start_ns, op.end_ns});
    all.push_back({op.start_ns, op.end_ns});
    lo = std::min(lo, op.start_ns);
    hi = std::max(hi, op.end_ns);
  }
  const IntervalSet comp(std::move(by_category[index_of(Category::kComp)]));
  const IntervalSet comm(std::move(by_category[index_of(Category::kComm)]));
  const IntervalSet mem(std::move(by_category[index_of(Category::kMem)]));
  const IntervalSet busy(std::move(all));
  m.wall_ns = hi - lo;
  m.comp_ns = comp.length();
  m.comm_ns = comm.length();
  m.mem_ns = mem.length();
  m.busy_ns = busy.length();
  m.comm_comp_ns = comm.intersect(comp).length();
  m.exposed_comm_ns = m.comm_ns - m.comm_comp_ns;  // |A \ B| = |A| − |A ∩ B|
  m.idle_ns = m.wall_ns - m.busy_ns;
  if (intervals != nullptr) *intervals = StepIntervals{comp, comm, mem};
  if (m.comm_ns > 0) {
    m.overlap = static_cast<double>(m.comm_comp_ns) / static_cast<double>(m.comm_ns);
  }
  const std::int64_t smaller = std::min(m.comm_ns, m.comp_ns);
  if (smaller > 0) {
    m.hidden_fraction = static_cast<double>(m.comm_comp_ns) / static_cast<double>(smaller);
  }
  return m;
}

void Stat::add(double v) {
  if (count == 0 || v < min) {
    min = v;
    argmin = count;
  }
  if (count == 0 || v > max) {
    max = v;
    argmax = count;
  }
  ++count;
  sum_ += v;
  mean = sum_ / static_cast<double>(count);
}

RankSummary summarise_rank(const RankTimeline& t, const std::string& source,
                           const StepVisitor& visit) {
  RankSummary s;
  s.rank = t.rank;
  s.world_size = t.world_size;
  s.host = t.host;
  s.device = t.device;
  s.backend = t.backend;
  s.source = source;
  s.clock_offset_ns = t.clock_offset_ns;
  for (const StepRecord& step : t.steps) {
    if (step.warmup) {
      ++s.warmup_steps;
      continue;
    }
    StepIntervals intervals;
    const StepMetrics m = compute_step_metrics(step, visit ? &intervals : nullptr);
    if (visit) visit(step, m, intervals);
    ++s.steps;
    s.ops += static_cast<std::int64_t>(step.ops.size());
    s.wall_ns.add(static_cast<double>(m.wall_ns));
    s.comp_ns.add(static_cast<double>(m.comp_ns));
    s.comm_ns.add(static_cast<double>(m.comm_ns));
    s.mem_ns.add(static_cast<double>(m.mem_ns));
    s.busy_ns.add(static_cast<double>(m.busy_ns));
    s.comm_comp_ns.add(static_cast<double>(m.comm_comp_ns));
    s.exposed_comm_ns.add(static_cast<double>(m.exposed_comm_ns));
    s.idle_ns.add(static_cast<double>(m.idle_ns));
    if (m.overlap) s.overlap.add(*m.overlap);
    if (m.hidden_fraction) s.hidden_fraction.add(*m.hidden_fraction);
  }
  return s;
}

}  // namespace commprof
