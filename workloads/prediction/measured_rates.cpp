// SPDX-License-Identifier: MIT
#include "workloads/prediction/measured_rates.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "analysis/group_time.hpp"
#include "src/core/errors.hpp"
#include "workloads/prediction/replay.hpp"

namespace commprof {
namespace {

// "l3", "mb0", "step2", "chunk1": an index, not part of what the op is.
bool index_token(const std::string& t) {
  for (const char* prefix : {"l", "mb", "step", "chunk", "bucket"}) {
    const std::string p = prefix;
    if (t.size() > p.size() && t.compare(0, p.size(), p) == 0 &&
        std::all_of(t.begin() + static_cast<std::ptrdiff_t>(p.size()), t.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      return true;
    }
  }
  return false;
}

std::int64_t mean(const std::vector<std::int64_t>& v) {
  if (v.empty()) return 0;
  double sum = 0;
  for (const std::int64_t x : v) sum += static_cast<double>(x);
  return static_cast<std::int64_t>(sum / static_cast<double>(v.size()));
}

// Collectives: (comm, step, seq) → the members' mean time from the last arrival to their end
// (what the replay gives each member: the time the step waits on it once all are there), bytes,
// size and hosts. Point-to-point ops carry no sequence number: each (comm, bytes) keeps its
// shortest op, the one whose peer was already there.
struct Instance {
  CollectiveKind collective = CollectiveKind::kAllReduce;
  std::string comm;
  int comm_size = 0;
  std::uint64_t bytes = 0;
  std::int64_t min_ns = -1;
  std::int64_t last_start_ns = 0;  // rank 0's clock
  double end_sum_ns = 0.0;
  int members = 0;
  std::set<std::string> hosts;
  std::int64_t time_ns() const {
    if (collective == CollectiveKind::kSendRecv || members == 0) return min_ns;
    return std::max<std::int64_t>(0,
                                  static_cast<std::int64_t>(end_sum_ns / members) - last_start_ns);
  }
};

struct Instances {
  std::map<std::tuple<std::string, int, std::int64_t>, Instance> collectives;
  std::map<std::pair<std::string, std::uint64_t>, Instance> p2p;
  std::vector<Instance> paired;  ///< transfers timed from their pairs in the step graphs
};

void count_hosts(const std::vector<RankTimeline>& ranks, MeasuredRates& m) {
  std::map<std::string, int> per_host;
  for (const RankTimeline& t : ranks) {
    ++per_host[t.host];
  }
  m.hosts = static_cast<int>(per_host.size());
  for (const auto& [host, n] : per_host) m.ranks_per_host = std::max(m.ranks_per_host, n);
}

void add_comm_op(const RankTimeline& t, const StepRecord& s, const OpRecord& op, Instances& in) {
  if (op.collective.empty() || op.comm.empty() || op.duration_ns() <= 0) return;
  const CollectiveKind kind = parse_link_collective(op.collective);
  const bool point = kind == CollectiveKind::kSendRecv;
  Instance& i = point ? in.p2p[{op.comm, op.bytes}] : in.collectives[{op.comm, s.index, op.seq}];
  i.collective = kind;
  i.comm = op.comm;
  i.comm_size = op.comm_size;
  i.bytes = op.bytes;
  if (i.min_ns < 0 || op.duration_ns() < i.min_ns) i.min_ns = op.duration_ns();
  const std::int64_t start = op.start_ns + t.clock_offset_ns;
  i.last_start_ns = i.members == 0 ? start : std::max(i.last_start_ns, start);
  i.end_sum_ns += static_cast<double>(op.end_ns + t.clock_offset_ns);
  ++i.members;
  i.hosts.insert(t.host);
}

// A compute or copy op's work and time, to its class and to its aggregate.
void add_work_op(const OpRecord& op, MeasuredRates& m) {
  const double ns = static_cast<double>(op.end_ns - op.start_ns);
  const bool flops = op.flops > 0;
  const double work = flops ? op.flops : static_cast<double>(op.bytes);
  if (work <= 0 || ns <= 0) return;
  Throughput& c = m.by_class[op_class(op.name) + (flops ? "/flop" : "/byte")];
  Throughput* agg = &m.copy_bytes;
  if (op.category == Category::kComp) {
    agg = !flops                                           ? &m.pass_bytes
          : op.name.find("attention") != std::string::npos ? &m.attention_flops
                                                           : &m.gemm_flops;
  }
  for (Throughput* tp : {&c, agg}) {
    tp->work += work;
    tp->ns += ns;
    ++tp->ops;
  }
}

// Every measured op of the files: collectives to `in`, the rest to the class rates, and each
// rank's mean step time.
void read_ops(const std::vector<RankTimeline>& ranks, MeasuredRates& m, Instances& in) {
  for (const RankTimeline& t : ranks) {
    double sum = 0;
    int n = 0;
    for (const StepRecord& s : t.steps) {
      if (s.warmup || s.ops.empty()) continue;
      sum += static_cast<double>(s.end_ns - s.start_ns);
      ++n;
      for (const OpRecord& op : s.ops) {
        if (op.category == Category::kComm) {
          add_comm_op(t, s, op, in);
        } else {
          add_work_op(op, m);
        }
      }
    }
    m.rank_step_ns.push_back(n > 0 ? sum / n : 0.0);
  }
}

// Each rank's compute against every rank's class rates, over all its steps and each step apart:
// the one is the rank's speed, the other's ratio to it the step's jitter.
void add_compute_speeds(const std::vector<RankTimeline>& ranks, MeasuredRates& m) {
  for (const RankTimeline& t : ranks) {
    double ns = 0, expected = 0;
    std::vector<double> step_speed;
    for (const StepRecord& s : t.steps) {
      if (s.warmup || s.ops.empty()) continue;
      double step_ns = 0, step_expected = 0;
      for (const OpRecord& op : s.ops) {
        if (op.category != Category::kComp || op.duration_ns() <= 0) continue;
        const bool flops = op.flops > 0;
        const double work = flops ? op.flops : static_cast<double>(op.bytes);
        const auto it = m.by_class.find(op_class(op.name) + (flops ? "/flop" : "/byte"));
        if (work <= 0 || it == m.by_class.end() || it->second.per_ns() <= 0) continue;
        step_ns += static_cast<double>(op.duration_ns());
        step_expected += work / it->second.per_ns();
      }
      if (step_expected > 0) step_speed.push_back(step_ns / step_expected);
      ns += step_ns;
      expected += step_expected;
    }
    const double speed = expected > 0 ? ns / expected : 1.0;
    m.rank_compute.push_back(speed);
    for (const double v : step_speed) m.compute_jitter.push_back(v / speed);
  }
}

// Host gaps, and transfers timed from their pairs (the step graph's partners, where the files
// record the peers): each side's time from the last side's arrival, as the replay gives it.
void read_graphs(const std::vector<RankTimeline>& ranks, const std::vector<StepGraph>& graphs,
                 MeasuredRates& m, Instances& in) {
  std::vector<std::int64_t> gaps[3];
  std::map<int, std::string> hosts;
  for (const RankTimeline& t : ranks) hosts[t.rank] = t.host;
  for (const StepGraph& g : graphs) {
    const ReplayModel model = measured_model(g);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
      gaps[index_of(g.ops[i].category)].push_back(model.gap_ns[i]);
      const GraphOp& op = g.ops[i];
      if (op.partners.empty() || op.category != Category::kComm || op.comm.empty() ||
          model.op_ns[i] <= 0) {
        continue;
      }
      Instance x;
      x.collective = CollectiveKind::kSendRecv;
      x.comm = op.comm;
      x.comm_size = 2;
      x.bytes = op.bytes;
      x.min_ns = model.op_ns[i];  // time_ns() of a p2p instance
      x.members = 1;
      x.hosts.insert(hosts[op.rank]);
      for (const int k : op.partners)
        x.hosts.insert(hosts[g.ops[static_cast<std::size_t>(k)].rank]);
      in.paired.push_back(std::move(x));
    }
    ++m.steps;
  }
  for (int c = 0; c < 3; ++c) m.gap_ns[c] = mean(gaps[c]);
}

// One point per communicator kind, size and link class: the mean of its instances' times (the
// fit weighs points by relative error; repeated calls of one size are one measurement).
void add_link_points(const Instances& in, MeasuredRates& m) {
  std::map<std::tuple<CollectiveKind, std::string, LinkClass, int, std::uint64_t>,
           std::pair<double, int>>
      points;
  auto add_point = [&](const Instance& i) {
    if (i.time_ns() <= 0 || i.comm_size < 1) return;
    const LinkClass link = i.hosts.size() > 1 ? LinkClass::kInterNode : LinkClass::kIntraNode;
    const int n = i.collective == CollectiveKind::kSendRecv ? 2 : i.comm_size;
    auto& [sum, count] = points[{i.collective, std::string(group_of(i.comm)), link, n, i.bytes}];
    sum += static_cast<double>(i.time_ns()) / 1e3;
    ++count;
  };
  for (const auto& [key, i] : in.collectives) {
    if (std::get<2>(key) >= 0) add_point(i);
  }
  // Transfers: from their pairs where the files recorded peers, else each size's shortest op.
  if (!in.paired.empty()) {
    for (const Instance& i : in.paired) add_point(i);
  } else {
    for (const auto& [key, i] : in.p2p) add_point(i);
  }
  for (const auto& [key, sum_count] : points) {
    LinkSample p;
    std::tie(p.collective, p.group, p.link, p.ranks, p.bytes) = key;
    p.time_us = sum_count.first / sum_count.second;
    m.collectives.push_back(p);
  }
}

// The spread of the ranks' mean step times (ranks without a measured step left out).
void add_step_spread(MeasuredRates& m) {
  m.rank_step_ns.erase(std::remove(m.rank_step_ns.begin(), m.rank_step_ns.end(), 0.0),
                       m.rank_step_ns.end());
  if (!m.rank_step_ns.empty()) {
    const auto [lo, hi] = std::minmax_element(m.rank_step_ns.begin(), m.rank_step_ns.end());
    if (*lo > 0) m.step_spread = *hi / *lo - 1;
  }
}

}  // namespace

std::string op_class(const std::string& name) {
  std::istringstream in(name);
  std::string token, out;
  while (std::getline(in, token, '.')) {
    if (index_token(token)) continue;
    out += (out.empty() ? "" : ".") + token;
  }
  return out;
}

MeasuredRates learn_rates(const std::vector<RankTimeline>& ranks,
                          const std::vector<StepGraph>& graphs) {
  MeasuredRates m;
  m.ranks = static_cast<int>(ranks.size());
  count_hosts(ranks, m);
  Instances in;
  read_ops(ranks, m, in);
  add_compute_speeds(ranks, m);
  read_graphs(ranks, graphs, m, in);
  add_link_points(in, m);
  if (m.steps == 0) {
    throw ConfigError(
        "the run holds no measured step with per-op timing (a run with --op-timing step, or "
        "warm-up steps only): nothing to learn rates from");
  }
  add_step_spread(m);
  return m;
}

}  // namespace commprof
