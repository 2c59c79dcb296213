// SPDX-License-Identifier: MIT
#include "workloads/prediction/overlap_slowdown.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "analysis/group_time.hpp"
#include "src/core/log.hpp"
#include "workloads/prediction/measured_rates.hpp"
#include "workloads/prediction/replay.hpp"

namespace commprof {
namespace {

using NsSpan = std::pair<std::int64_t, std::int64_t>;

// Sorted, disjoint.
std::vector<NsSpan> merged(std::vector<NsSpan> v) {
  std::sort(v.begin(), v.end());
  std::vector<NsSpan> out;
  for (const NsSpan& i : v) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

std::int64_t covered(const std::vector<NsSpan>& u, std::int64_t from, std::int64_t to) {
  std::int64_t sum = 0;
  auto it = std::lower_bound(u.begin(), u.end(), from,
                             [](const NsSpan& i, std::int64_t x) { return i.second <= x; });
  for (; it != u.end() && it->first < to; ++it)
    sum += std::min(to, it->second) - std::max(from, it->first);
  return sum;
}

// Sums of one group of ops against their references.
struct Sums {
  double alone_ns = 0, alone_ref = 0;  // alone ops: measured and reference time
  std::int64_t alone_ops = 0;
  std::vector<std::pair<double, double>> overlapped;  // (measured ns, reference ns) …
  std::vector<double> phi;                            // … and its overlap
  void add(double ns, double ref, double overlap) {
    if (overlap < kAloneOverlap) {
      alone_ns += ns;
      alone_ref += ref;
      ++alone_ops;
    } else {
      overlapped.emplace_back(ns, ref);
      phi.push_back(overlap);
    }
  }
  // The slowdown given the alone ratio `alone`: Σ(t − a·r) / Σ(φ·a·r), so that t = a·r·(1 + sφ)
  // holds for the group's total time.
  SlowdownFactor factor(double alone) const {
    SlowdownFactor f;
    f.alone = alone;
    f.alone_ops = alone_ops;
    f.overlapped_ops = static_cast<std::int64_t>(overlapped.size());
    double extra = 0, weight = 0, phi_sum = 0;
    for (std::size_t i = 0; i < overlapped.size(); ++i) {
      extra += overlapped[i].first - alone * overlapped[i].second;
      weight += phi[i] * alone * overlapped[i].second;
      phi_sum += phi[i];
    }
    if (!overlapped.empty()) f.mean_overlap = phi_sum / static_cast<double>(overlapped.size());
    if (weight > 0) {
      // A group faster overlapped than alone (noise) is kept as measured, but never so fast
      // that a fully overlapped op would take a tenth of its alone time.
      f.slowdown = std::max(-0.9, extra / weight);
      f.measured_slowdown = true;
    }
    return f;
  }
};

}  // namespace

std::vector<double> overlap_fractions(const StepGraph& g, const GraphTimes& t,
                                      const std::vector<std::int64_t>& own_ns) {
  std::vector<double> out(g.ops.size(), 0.0);
  for (const GraphRank& r : g.ranks) {
    std::vector<NsSpan> comp, comm;
    for (int i = r.first_op; i < r.first_op + r.ops; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (g.ops[k].category == Category::kComp) comp.emplace_back(t.start_ns[k], t.end_ns[k]);
      if (g.ops[k].category == Category::kComm) comm.emplace_back(t.start_ns[k], t.end_ns[k]);
    }
    comp = merged(std::move(comp));
    comm = merged(std::move(comm));
    for (int i = r.first_op; i < r.first_op + r.ops; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const Category c = g.ops[k].category;
      if (c == Category::kMem) continue;
      const std::int64_t from = std::max(t.start_ns[k], t.end_ns[k] - own_ns[k]);
      const std::int64_t len = t.end_ns[k] - from;
      if (len <= 0) continue;
      out[k] = static_cast<double>(covered(c == Category::kComp ? comm : comp, from, t.end_ns[k])) /
               static_cast<double>(len);
    }
  }
  return out;
}

std::vector<OpObservation> observe_ops(const StepGraph& g,
                                       const std::map<int, std::string>& host_of) {
  const GraphTimes t = measured_times(g);
  const ReplayModel m = measured_model(g);
  const std::vector<double> phi = overlap_fractions(g, t, m.op_ns);
  auto host = [&](int rank) {
    const auto it = host_of.find(rank);
    return it == host_of.end() ? std::string() : it->second;
  };
  std::vector<OpObservation> out;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const GraphOp& op = g.ops[i];
    OpObservation o;
    o.overlap = phi[i];
    o.ns = static_cast<double>(m.op_ns[i]);
    if (op.category == Category::kComm) {
      const bool transfer = !op.partners.empty();
      if (op.collective.empty() || op.comm.empty() || (op.collective_id < 0 && !transfer)) continue;
      const std::optional<CollectiveKind> kind = link_collective(op.collective);
      if (!kind) continue;  // no fit could time it
      o.comm = true;
      o.collective = *kind;
      o.group = std::string(group_of(op.comm));
      o.bytes = op.bytes;
      o.comm_size = o.collective == CollectiveKind::kSendRecv ? 2 : op.comm_size;
      std::set<std::string> hosts = {host(op.rank)};
      if (op.collective_id >= 0) {
        for (const int k : g.collectives[static_cast<std::size_t>(op.collective_id)].members)
          hosts.insert(host(g.ops[static_cast<std::size_t>(k)].rank));
      }
      for (const int k : op.partners) hosts.insert(host(g.ops[static_cast<std::size_t>(k)].rank));
      o.inter_node = hosts.size() > 1;
      if (o.ns <= 0 || o.comm_size < 1) continue;
    } else {
      const bool flops = op.flops > 0;
      o.work = flops ? op.flops : static_cast<double>(op.bytes);
      o.cls = op_class(op.name) + (flops ? "/flop" : "/byte");
      if (o.work <= 0 || o.ns <= 0) continue;
    }
    out.push_back(std::move(o));
  }
  return out;
}

int size_class(std::uint64_t bytes) {
  int c = 0;
  while (c < 63 && (std::uint64_t{2} << c) <= bytes) ++c;
  return bytes == 0 ? -1 : c;
}

std::string size_class_name(int cls) {
  if (cls < 0) return "0 B";
  auto name = [](int p) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    const int u = std::min(4, p / 10);
    return log::cat(std::uint64_t{1} << (p - 10 * u), " ", units[u]);
  };
  return "[" + name(cls) + ", " + name(cls + 1) + ")";
}

const SlowdownFactor* OverlapSlowdown::comm_factor(const CommKey& k) const {
  if (const auto it = comm.find(k); it != comm.end()) return &it->second;
  if (const auto it = comm_by_kind.find({k.collective, k.group}); it != comm_by_kind.end())
    return &it->second;
  if (const auto it = comm_by_collective.find(k.collective); it != comm_by_collective.end())
    return &it->second;
  return nullptr;
}

std::string OverlapSlowdown::comp_kind(const std::string& cls) {
  const std::size_t slash = cls.rfind('/');
  return slash == std::string::npos ? std::string() : cls.substr(slash + 1);
}

const SlowdownFactor& OverlapSlowdown::comp_factor(const std::string& cls) const {
  static const SlowdownFactor none;
  const auto it = comp.find(cls);
  if (it != comp.end() && it->second.measured_slowdown && it->second.overlapped_ops >= kMinClassOps)
    return it->second;
  const auto pool = comp_pooled.find(comp_kind(cls));
  return pool != comp_pooled.end() ? pool->second : none;
}

SlowdownReplay replay_with_slowdown(const StepGraph& g, std::vector<std::int64_t> gaps,
                                    const std::vector<double>& base,
                                    const std::vector<double>& slope, int max_replays) {
  SlowdownReplay r;
  r.model.gap_ns = std::move(gaps);
  r.model.op_ns.resize(g.ops.size());
  auto set_times = [&](const std::vector<double>& phi) {
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
      const double factor = phi.empty() ? 1.0 : 1.0 + slope[i] * phi[i];
      r.model.op_ns[i] = std::max<std::int64_t>(0, std::llround(base[i] * factor));
    }
    for (const GraphCollective& c : g.collectives) {
      std::int64_t longest = 0;
      for (const int m : c.members)
        longest = std::max(longest, r.model.op_ns[static_cast<std::size_t>(m)]);
      for (const int m : c.members) r.model.op_ns[static_cast<std::size_t>(m)] = longest;
    }
  };
  set_times({});
  r.times = replay(g, r.model);
  r.step_alone_ns = step_outcome(g, r.times).step_ns;
  r.overlap.assign(g.ops.size(), 0.0);
  if (std::all_of(slope.begin(), slope.end(), [](double s) { return s == 0.0; })) {
    r.overlap = overlap_fractions(g, r.times, r.model.op_ns);
    return r;
  }
  std::int64_t step = r.step_alone_ns;
  r.settled = false;
  bool first = true;
  while (r.replays < max_replays) {
    // From the second replay on, each op takes the mean of the overlap it was given and the one
    // it got: undamped, a step can swing between two states (an op slowed out of its overlap,
    // then sped back into it).
    std::vector<double> phi = overlap_fractions(g, r.times, r.model.op_ns);
    if (!first) {
      for (std::size_t i = 0; i < phi.size(); ++i) phi[i] = (phi[i] + r.overlap[i]) / 2;
    }
    first = false;
    r.overlap = std::move(phi);
    set_times(r.overlap);
    r.times = replay(g, r.model);
    ++r.replays;
    const std::int64_t now = step_outcome(g, r.times).step_ns;
    const bool still = std::llabs(now - step) * 1000 <= std::max<std::int64_t>(now, 1);
    step = now;
    if (still) {
      r.settled = true;
      break;
    }
  }
  return r;
}

OverlapSlowdown measure_slowdown(const std::vector<OpObservation>& ops, const LinkModel& links) {
  OverlapSlowdown out;
  // COMP: each class's alone rate, then its overlapped ops against it.
  std::map<std::string, std::vector<const OpObservation*>> classes;
  for (const OpObservation& o : ops) {
    if (!o.comm) classes[o.cls].push_back(&o);
  }
  std::map<std::string, Sums> comp_sums, pooled;
  for (const auto& [cls, list] : classes) {
    double work = 0, ns = 0;
    for (const OpObservation* o : list) {
      if (o->overlap >= kAloneOverlap) continue;
      work += o->work;
      ns += o->ns;
    }
    if (ns <= 0 || work <= 0) continue;
    const double rate = work / ns;
    out.alone_rate[cls] = rate;
    Sums& s = comp_sums[cls];
    for (const OpObservation* o : list) {
      s.add(o->ns, o->work / rate, o->overlap);
      if (o->overlap >= kAloneOverlap) {
        pooled[OverlapSlowdown::comp_kind(cls)].add(o->ns, o->work / rate, o->overlap);
      }
    }
  }
  for (const auto& [kind, s] : pooled) out.comp_pooled[kind] = s.factor(1.0);
  for (const auto& [cls, s] : comp_sums) out.comp[cls] = s.factor(1.0);
  // Classes never alone: their kind's pooled slowdown taken out of their measured time.
  for (const auto& [cls, list] : classes) {
    if (out.alone_rate.count(cls) != 0) continue;
    double work = 0, ns = 0;
    for (const OpObservation* o : list) {
      work += o->work;
      ns += o->ns / out.comp_factor(cls).factor(o->overlap);
    }
    if (ns > 0 && work > 0) out.alone_rate[cls] = work / ns;
  }

  // COMM: against the link model, at three levels (size class, communicator kind, collective);
  // a level without alone ops takes the alone ratio of the level above it, one without
  // overlapped ops its slowdown.
  std::map<CommKey, Sums> by_key;
  std::map<std::pair<CollectiveKind, std::string>, Sums> by_kind;
  std::map<CollectiveKind, Sums> by_collective;
  for (const OpObservation& o : ops) {
    if (!o.comm) continue;
    const LinkClass link = o.inter_node ? LinkClass::kInterNode : LinkClass::kIntraNode;
    const LinkFit* f = links.find(o.collective, link, o.group);
    const double ref = f == nullptr ? 0.0 : f->time_us(o.bytes, o.comm_size) * 1e3;
    if (ref <= 0) {
      ++out.comm_without_fit;
      continue;
    }
    by_key[{o.collective, o.group, size_class(o.bytes), o.inter_node}].add(o.ns, ref, o.overlap);
    by_kind[{o.collective, o.group}].add(o.ns, ref, o.overlap);
    by_collective[o.collective].add(o.ns, ref, o.overlap);
  }
  auto resolve = [](const Sums& s, const SlowdownFactor* above) {
    const double alone = s.alone_ops > 0 && s.alone_ref > 0 ? s.alone_ns / s.alone_ref
                         : above != nullptr                 ? above->alone
                                                            : 1.0;
    SlowdownFactor f = s.factor(alone);
    if (!f.measured_slowdown && above != nullptr) f.slowdown = above->slowdown;
    return f;
  };
  for (const auto& [c, s] : by_collective) out.comm_by_collective[c] = resolve(s, nullptr);
  for (const auto& [k, s] : by_kind)
    out.comm_by_kind[k] = resolve(s, &out.comm_by_collective[k.first]);
  for (const auto& [k, s] : by_key)
    out.comm[k] = resolve(s, &out.comm_by_kind[{k.collective, k.group}]);
  return out;
}

}  // namespace commprof
