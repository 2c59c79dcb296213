// SPDX-License-Identifier: MIT
#include "workloads/prediction/ideal_from_steps.hpp"

#include <functional>
#include <numeric>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

// What attribution groups by: COMP forward / backward where the op's name says so, COMM per
// communicator, MEM.
std::string label_of(const GraphOp& op) {
  if (op.category == Category::kComm) return "COMM " + (op.comm.empty() ? op.collective : op.comm);
  if (op.category == Category::kComp) {
    auto has = [&](const char* part) { return op.name.find(part) != std::string::npos; };
    if (has(".fwd") || has("forward")) return "COMP forward";
    if (has(".bwd") || has(".wgrad") || has(".dgrad") || has("backward")) return "COMP backward";
  }
  return category_name(op.category);
}

// The same op on every rank and step: what its ideal is taken over. Not its size: a straggler
// that does more work (run --slow-rank) records more bytes for the same op.
std::string kind_of(const GraphOp& op) {
  return std::string(category_name(op.category)) + "|" + op.name + "|" + op.collective + "|" +
         op.comm;
}

bool same_shape(const StepGraph& a, const StepGraph& b) {
  if (a.ops.size() != b.ops.size()) return false;
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    if (a.ops[i].rank != b.ops[i].rank || kind_of(a.ops[i]) != kind_of(b.ops[i]) ||
        a.ops[i].preds != b.ops[i].preds || a.ops[i].collective_id != b.ops[i].collective_id)
      return false;
  }
  return true;
}

// Groups: each matched collective, and each set of sends and receives that pair up.
void add_groups(const StepGraph& s, IdealGraph& g) {
  for (const GraphCollective& c : s.collectives) {
    if (c.members.empty()) continue;
    for (int m : c.members)
      g.nodes[static_cast<std::size_t>(m)].group = static_cast<int>(g.groups.size());
    g.groups.push_back({c.members, false});
  }
  std::vector<int> root(s.ops.size());
  std::iota(root.begin(), root.end(), 0);
  std::function<int(int)> find = [&](int x) { return root[x] == x ? x : root[x] = find(root[x]); };
  for (std::size_t i = 0; i < s.ops.size(); ++i)
    for (int p : s.ops[i].partners) root[find(static_cast<int>(i))] = find(p);
  std::map<int, std::vector<int>> sets;
  for (std::size_t i = 0; i < s.ops.size(); ++i)
    if (!s.ops[i].partners.empty() && s.ops[i].collective_id < 0)
      sets[find(static_cast<int>(i))].push_back(static_cast<int>(i));
  for (auto& [r, members] : sets) {
    for (int m : members)
      g.nodes[static_cast<std::size_t>(m)].group = static_cast<int>(g.groups.size());
    g.groups.push_back({members, false});
  }
}

}  // namespace

IdealGraph ideal_graph_from_steps(const std::vector<StepGraph>& steps, std::size_t* skipped) {
  if (steps.empty()) throw Error("no measured step with per-op timing to idealise");
  const StepGraph& first = steps.front();
  std::vector<const StepGraph*> used;
  for (const StepGraph& s : steps)
    if (same_shape(first, s)) used.push_back(&s);
  if (skipped != nullptr) *skipped = steps.size() - used.size();
  IdealGraph g;
  for (std::size_t i = 0; i < first.ops.size(); ++i) {
    const GraphOp& op = first.ops[i];
    IdealNode n;
    n.name = "rank" + std::to_string(op.rank) + ":" + std::to_string(op.index) + ":" + op.name;
    n.kind = kind_of(op);
    n.label = label_of(op);
    n.rank = op.rank;
    n.comm = op.category == Category::kComm;
    n.deps = op.preds.to_vector();
    g.nodes.push_back(std::move(n));
  }
  add_groups(first, g);
  const std::size_t n = g.nodes.size();
  std::vector<std::vector<double>> start(n), end(n);
  g.duration.assign(n, {});
  for (const StepGraph* s : used) {
    g.steps.push_back(s->step);
    std::int64_t t0 = s->ops.front().start_ns;
    for (const GraphOp& op : s->ops) t0 = std::min(t0, op.start_ns);
    for (std::size_t i = 0; i < n; ++i) {
      const GraphOp& op = s->ops[i];
      start[i].push_back(static_cast<double>(op.start_ns - t0) / 1e9);
      end[i].push_back(static_cast<double>(op.end_ns - t0) / 1e9);
      g.duration[i].push_back(static_cast<double>(op.end_ns - op.start_ns) / 1e9);
    }
  }
  set_transfers(g, start, end);
  return g;
}

}  // namespace commprof
