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
  return ready_ns(t, o, g.rank_of(o).start_ns, binding);
}

std::int64_t ready_ns(const GraphTimes& t, const GraphOp& o, std::int64_t rank_start_ns,
                      int* binding) {
  std::int64_t ready = rank_start_ns;
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
  // One rank's ops as spans, and the metrics' buffers, reused rank after rank: a step of
  // 16,384 ranks has half a million ops.
  std::vector<OpSpan> spans;
  StepScratch scratch;
  for (const GraphRank& r : g.ranks) {
    first = std::min(first, r.start_ns);
    std::int64_t end = r.start_ns;
    spans.clear();
    for (int i = r.first_op; i < r.first_op + r.ops; ++i) {
      const auto k = static_cast<std::size_t>(i);
      spans.push_back({g.ops[k].category, t.start_ns[k], t.end_ns[k]});
      end = std::max(end, t.end_ns[k]);
    }
    last = std::max(last, end);
    const StepMetrics m = compute_step_metrics(r.start_ns, end, spans, scratch);
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
