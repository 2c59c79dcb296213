// SPDX-License-Identifier: MIT
#include "analysis/graph/critical_path.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>

#include "src/timeline/category.hpp"

namespace commprof {
namespace {

// A collective or transfer the path went through: where its segment is (in walk order, last
// first), what it was (a collective, or the op on the path whose partners it waited for) and the
// member that arrived last.
struct OnPath {
  std::size_t segment = 0;
  int collective = -1;
  int transfer = -1;
  int last = -1;
};

// The ops that arrive at what `c` names: a collective's members, or a transfer and its partners.
std::vector<int> members_of(const StepGraph& g, const OnPath& c) {
  if (c.collective >= 0) return g.collectives[static_cast<std::size_t>(c.collective)].members;
  std::vector<int> m{c.transfer};
  const auto& partners = g.ops[static_cast<std::size_t>(c.transfer)].partners;
  m.insert(m.end(), partners.begin(), partners.end());
  return m;
}

// The time an op (or the gap before it) took under `t`.
std::int64_t own_ns(const StepGraph& g, const GraphTimes& t, int op, bool gap) {
  const auto i = static_cast<std::size_t>(op);
  if (!gap) return t.end_ns[i] - t.start_ns[i];
  return std::max<std::int64_t>(0, t.start_ns[i] - ready_ns(g, t, op));
}

// Of the run of `rank`'s segments before a collective's (walk order: after it), the one that
// took longest beyond the same op's mean on the other ranks.
class ExcessOverOthers {
 public:
  ExcessOverOthers(const StepGraph& g, const GraphTimes& t) : g_(g), t_(t) {}
  double operator()(int op, bool gap) {
    if (sums_.empty()) build();
    const std::int64_t own = own_ns(g_, t_, op, gap);
    const auto it = sums_.find(g_.ops[static_cast<std::size_t>(op)].name);
    if (it == sums_.end() || it->second[gap].count < 2) return static_cast<double>(own);
    const Sum& s = it->second[gap];
    const double others = (s.sum - static_cast<double>(own)) / (s.count - 1);
    return static_cast<double>(own) - others;
  }

 private:
  struct Sum {
    double sum = 0.0;
    int count = 0;
  };
  // By op name (views of the graph's names: a step of 16,384 ranks has half a million ops),
  // then op or gap. Ranks mostly repeat each other's ops: the name the op at the same place of
  // the rank before had is compared before anything is hashed.
  void build() {
    std::vector<std::pair<std::string_view, std::array<Sum, 2>*>> at_index;
    for (const GraphRank& r : g_.ranks) {
      for (int k = 0; k < r.ops; ++k) {
        const auto i = static_cast<std::size_t>(r.first_op + k);
        const GraphOp& op = g_.ops[i];
        if (static_cast<std::size_t>(k) >= at_index.size()) at_index.emplace_back();
        auto& [name, slot] = at_index[static_cast<std::size_t>(k)];
        if (slot == nullptr || name != op.name) {
          slot = &sums_[op.name];
          name = op.name;
        }
        const std::int64_t own = t_.end_ns[i] - t_.start_ns[i];
        const std::int64_t gap =
            std::max<std::int64_t>(0, t_.start_ns[i] - ready_ns(t_, op, r.start_ns));
        (*slot)[0].sum += static_cast<double>(own);
        (*slot)[1].sum += static_cast<double>(gap);
        ++(*slot)[0].count;
        ++(*slot)[1].count;
      }
    }
  }
  const StepGraph& g_;
  const GraphTimes& t_;
  std::unordered_map<std::string_view, std::array<Sum, 2>> sums_;
};

std::optional<StragglerCause> straggler_of(const StepGraph& g, const GraphTimes& t,
                                           const std::vector<PathSegment>& walked,
                                           const std::vector<OnPath>& collectives) {
  std::optional<StragglerCause> worst;
  ExcessOverOthers excess(g, t);
  for (const OnPath& c : collectives) {
    const std::vector<int> members = members_of(g, c);
    if (members.size() < 2) continue;
    const std::int64_t arrival = t.start_ns[static_cast<std::size_t>(c.last)];
    std::int64_t before = 0;
    bool any = false;
    for (const int m : members) {
      if (m == c.last) continue;
      const std::int64_t s = t.start_ns[static_cast<std::size_t>(m)];
      before = any ? std::max(before, s) : s;
      any = true;
    }
    const std::int64_t late = arrival - before;
    if (late <= 0 || (worst && late <= worst->late_ns)) continue;
    StragglerCause cause;
    cause.collective = c.collective;
    cause.transfer = c.transfer;
    cause.rank = g.ops[static_cast<std::size_t>(c.last)].rank;
    cause.late_ns = late;
    bool found = false;
    for (std::size_t k = c.segment + 1; k < walked.size(); ++k) {
      const PathSegment& s = walked[k];
      const GraphOp& op = g.ops[static_cast<std::size_t>(s.op)];
      // The rank's own stretch ends (walking back) at the collective or transfer before it.
      if (op.rank != cause.rank || (!s.gap && (op.collective_id >= 0 || !op.partners.empty()))) {
        break;
      }
      const double e = excess(s.op, s.gap);
      if (!found || e > cause.excess_ns) {
        cause.op = s.op;
        cause.gap = s.gap;
        cause.op_ns = s.length_ns();
        cause.excess_ns = e;
        found = true;
      }
    }
    worst = cause;
  }
  return worst;
}

}  // namespace

std::string segment_category(const StepGraph& g, const PathSegment& s) {
  if (s.gap) return "gap";
  return category_name(g.ops[static_cast<std::size_t>(s.op)].category);
}

CriticalPath critical_path(const StepGraph& g, const GraphTimes& t) {
  CriticalPath p;
  if (g.ops.empty()) return p;
  int v = 0;
  for (std::size_t i = 1; i < g.ops.size(); ++i) {
    if (t.end_ns[i] > t.end_ns[static_cast<std::size_t>(v)]) v = static_cast<int>(i);
  }
  std::int64_t cursor = p.end_ns = t.end_ns[static_cast<std::size_t>(v)];
  std::vector<PathSegment> walked;  // last first
  std::vector<OnPath> collectives;
  std::vector<bool> visited(g.ops.size(), false);
  while (true) {
    int at = v;
    const GraphOp& op = g.ops[static_cast<std::size_t>(v)];
    if (op.collective_id >= 0) {
      // Every member ended when the last one arrived (plus the transfer): the path runs
      // through that member.
      for (const int m : g.collectives[static_cast<std::size_t>(op.collective_id)].members) {
        if (t.start_ns[static_cast<std::size_t>(m)] > t.start_ns[static_cast<std::size_t>(at)]) {
          at = m;
        }
      }
      collectives.push_back({walked.size(), op.collective_id, -1, at});
    } else if (!op.partners.empty()) {
      // A transfer ended once its last side arrived: the path runs through that side.
      for (const int m : op.partners) {
        if (t.start_ns[static_cast<std::size_t>(m)] > t.start_ns[static_cast<std::size_t>(at)]) {
          at = m;
        }
      }
      collectives.push_back({walked.size(), -1, v, at});
    }
    visited[static_cast<std::size_t>(v)] = visited[static_cast<std::size_t>(at)] = true;
    const std::int64_t start = std::min(cursor, t.start_ns[static_cast<std::size_t>(at)]);
    walked.push_back({at, false, start, cursor});
    cursor = start;
    int binding = -1;
    const std::int64_t ready = ready_ns(g, t, at, &binding);
    if (ready < cursor) {
      walked.push_back({at, true, ready, cursor});
      cursor = ready;
    }
    if (binding < 0 || visited[static_cast<std::size_t>(binding)]) break;
    v = binding;
  }
  p.start_ns = cursor;
  p.straggler = straggler_of(g, t, walked, collectives);
  p.segments.assign(walked.rbegin(), walked.rend());
  return p;
}

}  // namespace commprof
