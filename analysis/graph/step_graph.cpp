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

namespace {

// A send or receive that did not record its peers (imports, earlier files).
bool transfer_without_peers(const OpView& v) {
  return v.send_to.empty() && v.recv_from.empty() &&
         (v.collective == "send" || v.collective == "recv" || v.collective == "sendrecv");
}

}  // namespace

void rank_step_preds(int rank, const StepView& step, RankStepPreds& out) {
  const std::vector<OpView>& ops = *step.ops;
  const int n = static_cast<int>(ops.size());
  out.ops_with_waits = out.transfers_without_peers = 0;
  // Stream order: a stream runs its ops one after another, in the order they started (files
  // list commprof's ops in issue order, imports' in start order; both agree on one stream).
  // The stream predecessor of each op (-1: none) is kept in `first` until the offsets go there.
  std::vector<int>& first = out.first;
  first.assign(static_cast<std::size_t>(n) + 1, -1);
  // Most steps list each stream's ops in start order already: then an op's predecessor is the
  // stream's op listed before it, found in one pass over the few streams a rank has.
  std::vector<std::string_view>& streams = out.streams;
  std::vector<int>& last = out.order;  // by stream, its op listed last so far
  streams.clear();
  last.clear();
  bool in_order = true;
  for (int i = 0; i < n && in_order; ++i) {
    const OpView& v = ops[static_cast<std::size_t>(i)];
    std::size_t s = 0;
    while (s < streams.size() && streams[s] != v.stream) ++s;
    if (s == streams.size()) {
      streams.push_back(v.stream);
      last.push_back(-1);
    }
    const int before = last[s];
    if (before >= 0 && ops[static_cast<std::size_t>(before)].start_ns > v.start_ns) {
      in_order = false;
    }
    first[static_cast<std::size_t>(i)] = before;
    last[s] = i;
  }
  if (!in_order) {
    first.assign(static_cast<std::size_t>(n) + 1, -1);
    std::vector<int>& order = out.order;
    order.resize(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&ops](int a, int b) {
      const OpView& x = ops[static_cast<std::size_t>(a)];
      const OpView& y = ops[static_cast<std::size_t>(b)];
      if (x.stream != y.stream) return x.stream < y.stream;
      return x.start_ns < y.start_ns;
    });
    for (std::size_t k = 1; k < order.size(); ++k) {
      const auto op = static_cast<std::size_t>(order[k]);
      if (ops[op].stream == ops[static_cast<std::size_t>(order[k - 1])].stream) {
        first[op] = order[k - 1];
      }
    }
  }
  out.list.clear();
  for (int i = 0; i < n; ++i) {
    const OpView& v = ops[static_cast<std::size_t>(i)];
    if (transfer_without_peers(v)) ++out.transfers_without_peers;
    const int stream_pred = first[static_cast<std::size_t>(i)];
    first[static_cast<std::size_t>(i)] = static_cast<int>(out.list.size());
    if (stream_pred >= 0) out.list.push_back(stream_pred);
    if (v.after.empty()) continue;
    ++out.ops_with_waits;
    for (const std::int32_t a : v.after) {
      if (a < 0 || a >= n || a == i) {
        throw Error("rank " + std::to_string(rank) + ", step " + std::to_string(step.index) +
                    ", op " + std::to_string(i) + " ('" + std::string(v.name) +
                    "'): 'after' names op " + std::to_string(a) +
                    ", which is not another op of the step (it has " + std::to_string(n) + ")");
      }
      out.list.push_back(a);
    }
  }
  first[static_cast<std::size_t>(n)] = static_cast<int>(out.list.size());
}

void append_rank_step(StepGraph& g, int rank, std::int64_t offset, const StepView& step) {
  const std::vector<OpView>& ops = *step.ops;
  const int base = static_cast<int>(g.ops.size());
  const int n = static_cast<int>(ops.size());
  RankStepPreds preds;
  rank_step_preds(rank, step, preds);
  g.ranks.push_back({rank, step.start_ns + offset, base, n});
  g.ops_with_waits += preds.ops_with_waits;
  g.transfers_without_peers += preds.transfers_without_peers;
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
    op.start_ns = v.start_ns + offset;
    op.end_ns = v.end_ns + offset;
    const auto i0 = static_cast<std::size_t>(preds.first[static_cast<std::size_t>(i)]);
    const auto i1 = static_cast<std::size_t>(preds.first[static_cast<std::size_t>(i) + 1]);
    for (std::size_t k = i0; k < i1; ++k) op.preds.push_back(base + preds.list[k]);
    g.ops.push_back(std::move(op));
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
  // One view for every op added (the matcher reads these fields of it): a fresh one is 200
  // bytes to clear per op of a step of half a million.
  OpView v;
  std::vector<int> added;  // the ops added, in order
  for (std::size_t k = 0; k < g.ops.size(); ++k) {
    GraphOp& op = g.ops[k];
    op.collective_id = -1;
    if (!CollectiveMatcher::takes(op)) continue;  // before the view is filled
    v.category = op.category;
    v.collective = op.collective;
    v.comm = op.comm;
    v.comm_size = op.comm_size;
    v.seq = op.seq;
    v.start_ns = op.start_ns;
    v.end_ns = op.end_ns;
    op.collective_id = static_cast<int>(matcher.add(op.rank, v, 0));
    added.push_back(static_cast<int>(k));
  }
  // What the graph takes of an instance is whole once its ops are added: finish() would add the
  // waits of every rank of the world (a table of them per step), which the graph does not need.
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
  for (const int k : added) {
    const int i = g.ops[static_cast<std::size_t>(k)].collective_id;
    if (i >= 0) g.collectives[static_cast<std::size_t>(i)].members.push_back(k);
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
