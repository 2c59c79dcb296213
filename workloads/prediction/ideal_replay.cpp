// SPDX-License-Identifier: MIT
#include "workloads/prediction/ideal_replay.hpp"

#include <algorithm>
#include <deque>
#include <numeric>
#include <set>

#include "src/core/errors.hpp"
#include "workloads/prediction/source_runs.hpp"  // median_of

namespace commprof {
namespace {

using Table = std::vector<std::vector<double>>;

// Below this a negative transfer is clock disagreement, not a real op (the artifact's 10 ms).
constexpr double kClockSlackS = 1e-2;

double mean_of(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// The latest start of a group's members per instance, across data-parallel ranks if it says so.
std::vector<double> group_start(const IdealGraph& g, const IdealGroup& grp, const Table& start) {
  std::vector<double> out(g.instances(), 0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    double m = start[grp.members.front()][i];
    for (int v : grp.members) m = std::max(m, start[v][i]);
    out[i] = m;
  }
  if (!grp.across_dp) return out;
  const std::size_t dp = static_cast<std::size_t>(g.dp);
  for (std::size_t s = 0; s < g.steps.size(); ++s) {
    const auto first = out.begin() + static_cast<std::ptrdiff_t>(s * dp);
    const double m = *std::max_element(first, first + static_cast<std::ptrdiff_t>(dp));
    std::fill(first, first + static_cast<std::ptrdiff_t>(dp), m);
  }
  return out;
}

// Ends a started node, or its whole group once every member has started; returns what ended.
std::vector<int> finish(const IdealGraph& g, int v, const Table& duration, const Table& transfer,
                        const Table& start, Table& end, std::vector<int>& started_in_group) {
  const IdealNode& n = g.nodes[static_cast<std::size_t>(v)];
  if (n.group < 0) {
    for (std::size_t i = 0; i < g.instances(); ++i) end[v][i] = start[v][i] + duration[v][i];
    return {v};
  }
  const IdealGroup& grp = g.groups[static_cast<std::size_t>(n.group)];
  if (++started_in_group[static_cast<std::size_t>(n.group)] < static_cast<int>(grp.members.size()))
    return {};
  const std::vector<double> at = group_start(g, grp, start);
  for (int m : grp.members)
    for (std::size_t i = 0; i < at.size(); ++i) end[m][i] = at[i] + transfer[m][i];
  return grp.members;
}

}  // namespace

void set_transfers(IdealGraph& g, const Table& start, const Table& end) {
  g.transfer.assign(g.nodes.size(), std::vector<double>(g.instances(), 0));
  for (const IdealGroup& grp : g.groups) {
    const std::vector<double> at = group_start(g, grp, start);
    for (int m : grp.members) {
      for (std::size_t i = 0; i < at.size(); ++i) {
        const double t = end[m][i] - at[i];
        g.transfer[m][i] = t <= -kClockSlackS ? 0 : t;
      }
    }
  }
}

std::vector<double> replay_steps(const IdealGraph& g, const Table& duration,
                                 const Table& transfer) {
  const std::size_t n = g.nodes.size(), inst = g.instances();
  std::vector<std::vector<int>> next(n);
  std::vector<int> waiting(n, 0), started_in_group(g.groups.size(), 0);
  for (std::size_t v = 0; v < n; ++v) {
    waiting[v] = static_cast<int>(g.nodes[v].deps.size());
    for (int u : g.nodes[v].deps) next[static_cast<std::size_t>(u)].push_back(static_cast<int>(v));
  }
  Table start(n, std::vector<double>(inst, 0)), end(n, std::vector<double>(inst, 0));
  std::deque<int> ready;
  for (std::size_t v = 0; v < n; ++v)
    if (waiting[v] == 0) ready.push_back(static_cast<int>(v));
  std::size_t ended = 0;
  while (!ready.empty()) {
    const int v = ready.front();
    ready.pop_front();
    for (int u : g.nodes[static_cast<std::size_t>(v)].deps)
      for (std::size_t i = 0; i < inst; ++i) start[v][i] = std::max(start[v][i], end[u][i]);
    for (int e : finish(g, v, duration, transfer, start, end, started_in_group)) {
      ++ended;
      for (int w : next[static_cast<std::size_t>(e)])
        if (--waiting[static_cast<std::size_t>(w)] == 0) ready.push_back(w);
    }
  }
  if (ended != n)
    throw Error("the op graph has a cycle or a group whose members wait on each other (" +
                std::to_string(n - ended) + " of " + std::to_string(n) + " ops never end)");
  std::vector<double> steps(g.steps.size(), 0);
  const std::size_t dp = static_cast<std::size_t>(g.dp);
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t i = 0; i < inst; ++i) steps[i / dp] = std::max(steps[i / dp], end[v][i]);
  return steps;
}

namespace {

// Every op kind's durations replaced by its mean (compute) or median (communication).
std::pair<Table, Table> idealised(const IdealGraph& g) {
  std::map<std::string, std::vector<double>> durations, transfers;
  for (std::size_t v = 0; v < g.nodes.size(); ++v) {
    auto& d = durations[g.nodes[v].kind];
    d.insert(d.end(), g.duration[v].begin(), g.duration[v].end());
    if (g.nodes[v].group < 0) continue;
    auto& t = transfers[g.nodes[v].kind];
    t.insert(t.end(), g.transfer[v].begin(), g.transfer[v].end());
  }
  std::map<std::string, std::pair<double, double>> typical;
  for (const IdealNode& n : g.nodes) {
    if (typical.count(n.kind) != 0) continue;
    auto pick = [&](const std::vector<double>& v) { return n.comm ? median_of(v) : mean_of(v); };
    typical[n.kind] = {pick(durations[n.kind]), pick(transfers[n.kind])};
  }
  Table d(g.nodes.size()), t(g.nodes.size());
  for (std::size_t v = 0; v < g.nodes.size(); ++v) {
    const auto& [dv, tv] = typical[g.nodes[v].kind];
    d[v].assign(g.instances(), dv);
    t[v].assign(g.instances(), tv);
  }
  return {d, t};
}

// One dimension's shares: the ideal replay with one value's ops at their measured durations.
template <class KeyOf>
void attribute(const IdealGraph& g, const std::pair<Table, Table>& ideal, const IdealResult& r,
               const std::string& dimension, KeyOf key_of, std::vector<IdealShare>& out) {
  std::set<std::string> keys;
  for (std::size_t v = 0; v < g.nodes.size(); ++v)
    for (std::size_t i = 0; i < g.instances(); ++i) keys.insert(key_of(v, i));
  std::vector<IdealShare> shares;
  for (const std::string& k : keys) {
    Table d = ideal.first, t = ideal.second;
    for (std::size_t v = 0; v < g.nodes.size(); ++v) {
      for (std::size_t i = 0; i < g.instances(); ++i) {
        if (key_of(v, i) != k) continue;
        d[v][i] = g.duration[v][i];
        t[v][i] = g.transfer[v][i];
      }
    }
    const std::vector<double> steps = replay_steps(g, d, t);
    IdealShare s{dimension, k, mean_of(steps) / r.ideal_s, {}};
    for (std::size_t j = 0; j < steps.size(); ++j)
      s.per_step[g.steps[j]] = steps[j] / r.step_ideal_s[j];
    shares.push_back(std::move(s));
  }
  std::stable_sort(shares.begin(), shares.end(), [](const IdealShare& a, const IdealShare& b) {
    return a.slowdown > b.slowdown;
  });
  out.insert(out.end(), shares.begin(), shares.end());
}

}  // namespace

IdealResult ideal_analysis(const IdealGraph& g) {
  if (g.nodes.empty() || g.steps.empty()) throw Error("no op to replay");
  IdealResult r;
  r.steps = g.steps;
  r.step_nodelay_s = replay_steps(g, g.duration, g.transfer);
  const std::pair<Table, Table> ideal = idealised(g);
  r.step_ideal_s = replay_steps(g, ideal.first, ideal.second);
  r.nodelay_s = mean_of(r.step_nodelay_s);
  r.ideal_s = mean_of(r.step_ideal_s);
  if (r.ideal_s <= 0) throw Error("the idealised steps take no time");
  r.slowdown = r.nodelay_s / r.ideal_s;
  const std::size_t dp = static_cast<std::size_t>(g.dp);
  attribute(
      g, ideal, r, "op_kind", [&](std::size_t v, std::size_t) { return g.nodes[v].label; },
      r.shares);
  if (g.has_stages) {
    attribute(
        g, ideal, r, "stage",
        [&](std::size_t v, std::size_t) { return std::to_string(g.nodes[v].stage); }, r.shares);
  }
  if (g.dp > 1) {
    attribute(
        g, ideal, r, "dp_rank", [&](std::size_t, std::size_t i) { return std::to_string(i % dp); },
        r.shares);
  }
  if (std::any_of(g.nodes.begin(), g.nodes.end(), [](const IdealNode& n) { return n.rank >= 0; })) {
    attribute(
        g, ideal, r, "rank",
        [&](std::size_t v, std::size_t) { return std::to_string(g.nodes[v].rank); }, r.shares);
  }
  return r;
}

}  // namespace commprof
