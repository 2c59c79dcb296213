// SPDX-License-Identifier: MIT
#include "analysis/graph/graph_times.hpp"

#include <algorithm>

#include "analysis/step_metrics.hpp"

namespace commprof {

GraphTimes measured_times(const StepGraph& g) {
  GraphTimes t;
  t.start_ns.reserve(g.ops.size());
  t.end_ns.reserve(g.ops.size());
  for (const GraphOp& op : g.ops) {
    t.start_ns.push_back(op.start_ns);
    t.end_ns.push_back(op.end_ns);
  }
  return t;
}

std::int64_t ready_ns(const StepGraph& g, const GraphTimes& t, int op, int* binding) {
  const GraphOp& o = g.ops[static_cast<std::size_t>(op)];
  std::int64_t ready = g.rank_of(o).start_ns;
  int by = -1;
  for (const int p : o.preds) {
    const std::int64_t end = t.end_ns[static_cast<std::size_t>(p)];
    if (end > ready) {  // ties keep the step start, then the stream's own order
      ready = end;
      by = p;
    }
  }
  if (binding != nullptr) *binding = by;
  return ready;
}

StepOutcome step_outcome(const StepGraph& g, const GraphTimes& t) {
  StepOutcome out;
  if (g.ranks.empty()) return out;
  std::int64_t first = g.ranks.front().start_ns, last = first;
  double overlap_sum = 0.0;
  int overlap_ranks = 0;
  for (const GraphRank& r : g.ranks) {
    StepRecord s;
    s.start_ns = s.end_ns = r.start_ns;
    first = std::min(first, r.start_ns);
    for (int i = r.first_op; i < r.first_op + r.ops; ++i) {
      OpRecord op;
      op.category = g.ops[static_cast<std::size_t>(i)].category;
      op.start_ns = t.start_ns[static_cast<std::size_t>(i)];
      op.end_ns = t.end_ns[static_cast<std::size_t>(i)];
      s.end_ns = std::max(s.end_ns, op.end_ns);
      s.ops.push_back(op);
    }
    last = std::max(last, s.end_ns);
    const StepMetrics m = compute_step_metrics(s);
    out.exposed_comm_ns += static_cast<double>(m.exposed_comm_ns);
    out.comm_ns += static_cast<double>(m.comm_ns);
    if (m.overlap) {
      overlap_sum += *m.overlap;
      ++overlap_ranks;
    }
  }
  const double n = static_cast<double>(g.ranks.size());
  out.step_ns = last - first;
  out.exposed_comm_ns /= n;
  out.comm_ns /= n;
  if (overlap_ranks > 0) out.overlap = overlap_sum / overlap_ranks;
  return out;
}

}  // namespace commprof
