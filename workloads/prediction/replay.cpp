// SPDX-License-Identifier: MIT
#include "workloads/prediction/replay.hpp"

#include <algorithm>
#include <deque>

#include "src/core/errors.hpp"

namespace commprof {

ReplayModel measured_model(const StepGraph& g) {
  const GraphTimes t = measured_times(g);
  ReplayModel m;
  m.op_ns.resize(g.ops.size());
  m.gap_ns.resize(g.ops.size());
  m.ready_ns.resize(g.ops.size());
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    m.op_ns[i] = g.ops[i].end_ns - g.ops[i].start_ns;
    m.ready_ns[i] = ready_ns(g, t, static_cast<int>(i));
    m.gap_ns[i] = std::max<std::int64_t>(0, t.start_ns[i] - m.ready_ns[i]);
    if (!g.ops[i].partners.empty()) {  // a transfer: its time from the last side's arrival
      std::int64_t last = t.start_ns[i];
      for (const int p : g.ops[i].partners)
        last = std::max(last, t.start_ns[static_cast<std::size_t>(p)]);
      m.op_ns[i] = std::max<std::int64_t>(0, t.end_ns[i] - last);
    }
  }
  for (const GraphCollective& c : g.collectives) {
    std::int64_t last = 0;
    for (const int k : c.members) last = std::max(last, t.start_ns[static_cast<std::size_t>(k)]);
    for (const int k : c.members) {
      const auto i = static_cast<std::size_t>(k);
      m.op_ns[i] = std::max<std::int64_t>(0, t.end_ns[i] - last);
    }
  }
  return m;
}

GraphTimes replay(const StepGraph& g, const ReplayModel& model) {
  const std::size_t n = g.ops.size();
  GraphTimes t;
  t.start_ns.assign(n, 0);
  t.end_ns.assign(n, 0);
  std::vector<std::vector<int>> next(n);
  std::vector<std::size_t> waiting(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    waiting[i] = g.ops[i].preds.size();
    for (const int p : g.ops[i].preds)
      next[static_cast<std::size_t>(p)].push_back(static_cast<int>(i));
  }
  std::vector<std::size_t> arrived(g.collectives.size(), 0);
  std::vector<std::int64_t> last_arrival(g.collectives.size(), 0);
  std::deque<int> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push_back(static_cast<int>(i));
  }
  std::size_t done = 0;
  std::vector<bool> ended(n, false), started(n, false);
  // An op that has ended releases the ops that follow it.
  auto finish = [&](int op) {
    ++done;
    ended[static_cast<std::size_t>(op)] = true;
    for (const int s : next[static_cast<std::size_t>(op)]) {
      if (--waiting[static_cast<std::size_t>(s)] == 0) ready.push_back(s);
    }
  };
  while (!ready.empty()) {
    const int v = ready.front();
    ready.pop_front();
    const auto i = static_cast<std::size_t>(v);
    const std::int64_t at = ready_ns(g, t, v);
    const std::int64_t late =
        model.ready_ns.empty() ? 0 : std::max<std::int64_t>(0, at - model.ready_ns[i]);
    t.start_ns[i] = at + std::max<std::int64_t>(0, model.gap_ns[i] - late);
    const int c = g.ops[i].collective_id;
    if (c < 0 && g.ops[i].partners.empty()) {
      t.end_ns[i] = t.start_ns[i] + model.op_ns[i];
      finish(v);
      continue;
    }
    if (c < 0) {
      // A transfer ends its own time after the last of it and its partners has arrived: it and
      // each partner may now have every side it waits for.
      started[i] = true;
      auto try_end = [&](int x) {
        const auto xi = static_cast<std::size_t>(x);
        if (!started[xi] || ended[xi]) return;
        std::int64_t last = t.start_ns[xi];
        for (const int p : g.ops[xi].partners) {
          if (!started[static_cast<std::size_t>(p)]) return;
          last = std::max(last, t.start_ns[static_cast<std::size_t>(p)]);
        }
        t.end_ns[xi] = last + model.op_ns[xi];
        finish(x);
      };
      try_end(v);
      for (const int p : g.ops[i].partners) try_end(p);
      continue;
    }
    const auto ci = static_cast<std::size_t>(c);
    const GraphCollective& coll = g.collectives[ci];
    last_arrival[ci] = arrived[ci] == 0 ? t.start_ns[i] : std::max(last_arrival[ci], t.start_ns[i]);
    if (++arrived[ci] < coll.members.size()) continue;
    for (const int m : coll.members) {
      t.end_ns[static_cast<std::size_t>(m)] =
          last_arrival[ci] + model.op_ns[static_cast<std::size_t>(m)];
    }
    for (const int m : coll.members) finish(m);
  }
  if (done < n) {
    std::size_t stuck = 0;
    while (stuck < n && ended[stuck]) ++stuck;
    const GraphOp& op = g.ops[stuck];
    throw Error(
        "step " + std::to_string(g.step) + " cannot be replayed: " + std::to_string(n - done) +
        " of its " + std::to_string(n) + " ops never became ready, among them rank " +
        std::to_string(op.rank) + "'s '" + op.name +
        "' (ranks that issued their collectives in different orders, or " + "waits that loop)");
  }
  return t;
}

}  // namespace commprof
