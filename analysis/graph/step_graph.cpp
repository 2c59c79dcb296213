// SPDX-License-Identifier: MIT
#include "analysis/graph/step_graph.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "analysis/collective_matching.hpp"
#include "src/core/errors.hpp"

namespace commprof {

const GraphRank& StepGraph::rank_of(const GraphOp& op) const {
  const auto it = std::lower_bound(ranks.begin(), ranks.end(), op.rank,
                                   [](const GraphRank& r, int rank) { return r.rank < rank; });
  if (it == ranks.end() || it->rank != op.rank) {
    throw Error("step graph: op '" + op.name + "' of rank " + std::to_string(op.rank) +
                " has no rank entry");
  }
  return *it;
}

void StepGraphBuilder::add(int rank, std::int64_t offset, const StepView& step) {
  if (step.warmup || step.ops == nullptr || step.ops->empty()) return;
  StepGraph& g = steps_[step.index];
  g.step = step.index;
  for (const GraphRank& r : g.ranks) {
    if (r.rank == rank) {
      throw Error("rank " + std::to_string(rank) + " has step " + std::to_string(step.index) +
                  " twice");
    }
  }
  append_rank_step(g, rank, offset, step);
}

void append_rank_step(StepGraph& g, int rank, std::int64_t offset, const StepView& step) {
  const std::vector<OpView>& ops = *step.ops;
  const int base = static_cast<int>(g.ops.size());
  const int n = static_cast<int>(ops.size());
  g.ranks.push_back({rank, step.start_ns + offset, base, n});
  for (int i = 0; i < n; ++i) {
    const OpView& v = ops[static_cast<std::size_t>(i)];
    GraphOp op;
    op.rank = rank;
    op.index = i;
    op.category = v.category;
    op.name = std::string(v.name);
    op.stream = std::string(v.stream);
    op.collective = std::string(v.collective);
    op.comm = std::string(v.comm);
    op.comm_size = v.comm_size;
    op.seq = v.seq;
    op.bytes = v.bytes;
    op.flops = v.flops;
    op.send_to.assign(v.send_to.begin(), v.send_to.end());
    op.recv_from.assign(v.recv_from.begin(), v.recv_from.end());
    if (op.send_to.empty() && op.recv_from.empty() &&
        (op.collective == "send" || op.collective == "recv" || op.collective == "sendrecv")) {
      ++g.transfers_without_peers;
    }
    op.start_ns = v.start_ns + offset;
    op.end_ns = v.end_ns + offset;
    g.ops.push_back(std::move(op));
  }
  // Stream order: a stream runs its ops one after another, in the order they started (files
  // list commprof's ops in issue order, imports' in start order; both agree on one stream).
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const GraphOp& x = g.ops[static_cast<std::size_t>(base + a)];
    const GraphOp& y = g.ops[static_cast<std::size_t>(base + b)];
    if (x.stream != y.stream) return x.stream < y.stream;
    return x.start_ns < y.start_ns;
  });
  for (std::size_t k = 1; k < order.size(); ++k) {
    GraphOp& op = g.ops[static_cast<std::size_t>(base + order[k])];
    const GraphOp& before = g.ops[static_cast<std::size_t>(base + order[k - 1])];
    if (before.stream == op.stream) op.preds.push_back(base + order[k - 1]);
  }
  for (int i = 0; i < n; ++i) {
    const OpView& v = ops[static_cast<std::size_t>(i)];
    if (v.after.empty()) continue;
    ++g.ops_with_waits;
    GraphOp& op = g.ops[static_cast<std::size_t>(base + i)];
    for (const std::int32_t a : v.after) {
      if (a < 0 || a >= n || a == i) {
        throw Error("rank " + std::to_string(rank) + ", step " + std::to_string(step.index) +
                    ", op " + std::to_string(i) + " ('" + op.name + "'): 'after' names op " +
                    std::to_string(a) + ", which is not another op of the step (it has " +
                    std::to_string(n) + ")");
      }
      op.preds.push_back(base + a);
    }
  }
}

void StepGraphBuilder::add(const RankTimeline& t) {
  for (const StepRecord& s : t.steps) {
    const std::vector<OpView> views = op_views(s);
    StepView v;
    v.index = s.index;
    v.warmup = s.warmup;
    v.start_ns = s.start_ns;
    v.end_ns = s.end_ns;
    v.ops = &views;
    add(t.rank, t.clock_offset_ns, v);
  }
}

namespace {

// Matches the step's collectives across its ranks with the reducer's matcher.
void match_collectives(StepGraph& g) {
  std::sort(g.ranks.begin(), g.ranks.end(),
            [](const GraphRank& a, const GraphRank& b) { return a.rank < b.rank; });
  CollectiveMatcher matcher;
  int world = 0;
  for (const GraphOp& op : g.ops) {
    OpView v;
    v.category = op.category;
    v.collective = op.collective;
    v.comm = op.comm;
    v.comm_size = op.comm_size;
    v.seq = op.seq;
    v.start_ns = op.start_ns;
    v.end_ns = op.end_ns;
    matcher.add(op.rank, v, 0);
    world = std::max(world, op.rank + 1);
  }
  matcher.finish(world);
  const std::vector<CollectiveInstance>& found = matcher.instances();
  g.collectives.resize(found.size());
  for (std::size_t i = 0; i < found.size(); ++i) {
    GraphCollective& c = g.collectives[i];
    c.comm = found[i].comm;
    c.collective = found[i].collective;
    c.seq = found[i].seq;
    c.comm_size = found[i].comm_size;
    c.time_ns = found[i].time_ns();
    if (found[i].ranks_seen < found[i].comm_size) ++g.incomplete;
  }
  for (std::size_t k = 0; k < g.ops.size(); ++k) {
    GraphOp& op = g.ops[k];
    if (op.category != Category::kComm || op.collective.empty() || op.comm.empty() || op.seq < 0) {
      continue;
    }
    const std::int64_t i = matcher.find(op.comm, op.seq);
    if (i < 0) continue;
    op.collective_id = static_cast<int>(i);
    g.collectives[static_cast<std::size_t>(i)].members.push_back(static_cast<int>(k));
  }
}

}  // namespace

void match_transfers(StepGraph& g) {
  std::map<std::pair<int, int>, std::pair<std::vector<int>, std::vector<int>>> pairs;
  for (const GraphRank& r : g.ranks) {
    for (int i = r.first_op; i < r.first_op + r.ops; ++i) {
      const GraphOp& op = g.ops[static_cast<std::size_t>(i)];
      for (const std::int32_t to : op.send_to) pairs[{r.rank, to}].first.push_back(i);
      for (const std::int32_t from : op.recv_from) pairs[{from, r.rank}].second.push_back(i);
    }
  }
  auto link = [&g](int a, int b) {
    std::vector<int>& p = g.ops[static_cast<std::size_t>(a)].partners;
    if (a != b && std::find(p.begin(), p.end(), b) == p.end()) p.push_back(b);
  };
  for (const auto& [ranks, ops] : pairs) {
    const auto& [sends, recvs] = ops;
    const std::size_t n = std::min(sends.size(), recvs.size());
    for (std::size_t k = 0; k < n; ++k) {
      link(sends[k], recvs[k]);
      link(recvs[k], sends[k]);
    }
    g.unmatched_transfers += static_cast<std::int64_t>(std::max(sends.size(), recvs.size()) - n);
  }
}

void complete_step_graph(StepGraph& g) {
  // Ops are rank by rank in the order ranks were added; ranks are sorted for lookups, and
  // each keeps its range of ops.
  match_collectives(g);
  match_transfers(g);
}

std::vector<StepGraph> StepGraphBuilder::finish() {
  std::vector<StepGraph> out;
  out.reserve(steps_.size());
  for (auto& [index, g] : steps_) {
    complete_step_graph(g);
    out.push_back(std::move(g));
  }
  steps_.clear();
  return out;
}

std::vector<StepGraph> load_step_graphs(const std::vector<std::string>& files,
                                        std::vector<std::string>* skipped) {
  StepGraphBuilder builder;
  for (const std::string& f : files) {
    // One file at a time, whole: a file that fails adds nothing, and only the graph is kept.
    RankTimeline t;
    try {
      t = read_rank_file(f);
    } catch (const Error& e) {
      if (skipped == nullptr) throw;
      skipped->push_back(e.what());
      continue;
    }
    builder.add(t);
  }
  return builder.finish();
}

}  // namespace commprof
