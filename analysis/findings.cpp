// SPDX-License-Identifier: MIT
#include "analysis/findings.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "src/core/errors.hpp"
#include "src/timeline/json_object.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {
namespace {

// ------------------------------------------------------------------ formatting evidence
std::string printed(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
std::string ms(double ns) { return printed("%.3f ms", ns / 1e6); }
std::string pct(double ratio) { return printed("%.1f %%", 100.0 * ratio); }
std::string num(double v) { return printed("%.2f", v); }

// ------------------------------------------------------------------ what the rules read
struct Input {
  const Report& r;
  const RunFacts& facts;
  const FindingOptions& o;
};

// A rank's step time where its per-op quantities come from: its timed steps' (sampled timing
// times some steps only), else every measured step's.
double timed_step_ns(const RankSummary& s) {
  return s.timed_wall_ns.count > 0 ? s.timed_wall_ns.mean : s.wall_ns.mean;
}

// Means over the ranks with per-op timing.
struct RankMeans {
  int ranks = 0;
  double step_ns = 0, comp_ns = 0, comm_ns = 0, exposed_ns = 0;
};
RankMeans rank_means(const Report& r) {
  RankMeans m;
  for (const RankSummary& s : r.ranks) {
    if (s.timed_steps == 0 || s.ops == 0) continue;
    ++m.ranks;
    m.step_ns += timed_step_ns(s);
    m.comp_ns += s.comp_ns.mean;
    m.comm_ns += s.comm_ns.mean;
    m.exposed_ns += s.exposed_comm_ns.mean;
  }
  if (m.ranks > 0) {
    const double n = m.ranks;
    m.step_ns /= n;
    m.comp_ns /= n;
    m.comm_ns /= n;
    m.exposed_ns /= n;
  }
  return m;
}

Finding fired(std::string rule, double cost_ns, double step_ns) {
  Finding f;
  f.rule = std::move(rule);
  f.status = "fired";
  f.cost_ns = std::max(0.0, cost_ns);
  f.cost_fraction = step_ns > 0 ? f.cost_ns / step_ns : -1.0;
  return f;
}

Finding not_evaluated(std::string rule, const std::string& needs) {
  Finding f;
  f.rule = std::move(rule);
  f.status = "not evaluated: " + needs;
  return f;
}

constexpr const char* kNeedsOps =
    "needs per-op timing (the files carry step times only, e.g. --op-timing step)";
constexpr const char* kNeedsCompute =
    "needs compute ops (the files hold none: a capture of communication only, such as the NCCL "
    "profiler plugin's)";

bool has_compute(const Report& r) {
  return std::any_of(r.ranks.begin(), r.ranks.end(),
                     [](const RankSummary& s) { return s.comp_ns.mean > 0; });
}

constexpr const char* kPluginOnly =
    "cannot be computed: no compute in a plugin-only capture (NCCL's profiler plugin records "
    "communication alone; trace the same job with nsys or torch.profiler for its compute)";

// Why a rule over compute and communication cannot run, or "" when it can.
std::string needs_ops_and_compute(const Input& in, const RankMeans& m) {
  const bool plugin_only = !in.r.ranks.empty() && std::none_of(in.r.ranks.begin(), in.r.ranks.end(),
                                                               [](const RankSummary& s) {
                                                                 return compute_known(s.backend);
                                                               });
  if (plugin_only) return kPluginOnly;
  if (m.ranks == 0) return kNeedsOps;
  if (!has_compute(in.r)) return kNeedsCompute;
  return "";
}

// The COMM ops on the critical paths, most time first: "op on comm (t)", at most `n`.
std::string path_collectives(const Report& r, std::size_t n, std::string* comms = nullptr) {
  std::string out;
  std::size_t k = 0;
  for (const CriticalShareRow& c : r.critical_shares) {
    if (c.category != "COMM" || k == n) continue;
    out += (k++ ? ", " : "") + c.op + " on " + c.comm + " (rank " + std::to_string(c.rank) + ", " +
           ms(c.mean_ns) + ")";
    if (comms != nullptr && comms->find(c.comm) == std::string::npos)
      *comms += (comms->empty() ? "" : " ") + c.comm;
  }
  return out;
}

// The mean over ranks of each rank's wait at collectives for later ranks per timed step, and
// the rank the others waited for most; ranks 0 where no collective was matched.
struct Waits {
  int ranks = 0;
  double per_step_ns = 0;
  const RankWait* straggler = nullptr;
  std::map<int, double> by_rank;  ///< each rank's wait per timed step
};
Waits waits_of(const Report& r) {
  std::map<int, const RankSummary*> by_rank;
  for (const RankSummary& s : r.ranks) by_rank[s.rank] = &s;
  Waits w;
  for (const RankWait& rw : r.waits) {
    const auto it = by_rank.find(rw.rank);
    if (it == by_rank.end() || it->second->timed_steps == 0) continue;
    const double per_step = static_cast<double>(rw.wait_ns) / it->second->timed_steps;
    w.by_rank[rw.rank] = per_step;
    w.per_step_ns += per_step;
    ++w.ranks;
    if (w.straggler == nullptr || rw.wait_caused_ns > w.straggler->wait_caused_ns)
      w.straggler = &rw;
  }
  if (w.ranks > 0) w.per_step_ns /= w.ranks;
  return w;
}

// What of a rank's exposed communication per timed step no earlier start could hide: its wait
// at collectives for later ranks (sync_wait's) and its pipeline transfers' exposed time (waiting
// for the neighbouring stage: pipeline_bubble's and stage_imbalance's).
double unhideable_ns(const RankSummary& s, const Waits& w) {
  double out = 0;
  if (const auto it = w.by_rank.find(s.rank); it != w.by_rank.end()) out += it->second;
  for (const GroupTime& g : s.group_times) {
    if (g.group == "pp" && s.timed_steps > 0)
      out += static_cast<double>(g.exposed_ns) / s.timed_steps;
  }
  return out;
}

// The mean over ranks with per-op timing of their exposed transfers per step: exposed
// communication less unhideable_ns.
double exposed_transfers_ns(const Report& r, const Waits& w) {
  double sum = 0;
  int n = 0;
  for (const RankSummary& s : r.ranks) {
    if (s.timed_steps == 0 || s.ops == 0) continue;
    sum += std::max(0.0, s.exposed_comm_ns.mean - unhideable_ns(s, w));
    ++n;
  }
  return n > 0 ? sum / n : 0;
}

// ------------------------------------------------------------------ the rules
std::optional<Finding> overlap_below_target(const Input& in) {
  const RankMeans m = rank_means(in.r);
  if (const std::string why = needs_ops_and_compute(in, m); !why.empty())
    return not_evaluated("overlap_below_target", why);
  // What is short of the target, but no more than the rank's exposed transfers: waiting for a
  // later rank cannot be hidden (sync_wait's), so this never outranks exposed_comm.
  const Waits waits = waits_of(in.r);
  double overlap = 0, cost = 0, worst = 2;
  int n = 0, worst_rank = -1;
  for (const RankSummary& s : in.r.ranks) {
    if (s.overlap.count == 0 || s.comm_ns.mean <= 0) continue;
    ++n;
    overlap += s.overlap.mean;
    const double transfers = std::max(0.0, s.exposed_comm_ns.mean - unhideable_ns(s, waits));
    cost +=
        std::min(transfers, s.comm_ns.mean * std::max(0.0, in.o.target_overlap - s.overlap.mean));
    if (s.overlap.mean < worst) worst = s.overlap.mean, worst_rank = s.rank;
  }
  if (n == 0) return std::nullopt;
  overlap /= n;
  if (overlap >= in.o.target_overlap) return std::nullopt;
  Finding f = fired("overlap_below_target", cost / n, m.step_ns);
  f.ranks = std::to_string(worst_rank);
  f.evidence = "overlap " + pct(overlap) + " (mean over " + std::to_string(n) +
               " ranks; lowest rank " + std::to_string(worst_rank) + ": " + pct(worst) +
               ") against the target " + pct(in.o.target_overlap) + "; communication " +
               ms(m.comm_ns) + " per step, " + ms(m.exposed_ns) + " of it exposed";
  f.action = "hide " + ms(f.cost_ns) +
             " more communication per step behind compute to reach the target: start it "
             "earlier (exposed_comm names the collectives), or give each step more compute "
             "(a larger micro-batch)";
  f.shown_in = "table-ranks";
  return f;
}

// What to change for exposed communication of `group`.
std::string exposed_action(const Input& in, const std::string& group) {
  const RunFacts& rf = in.facts;
  if (group == "dp" || group == "edp") {
    if (rf.known && rf.dp_mode == "zero") {
      return "ZeRO/FSDP: prefetch the next layer's parameters (its all-gather one layer ahead) "
             "so only the first gather waits, and keep the reduce-scatters in backward's shadow";
    }
    std::string bucket = rf.known ? " (now " + num(rf.bucket_mb) + " MiB, e.g. --bucket-mb " +
                                        num(rf.bucket_mb / 2) + ")"
                                  : "";
    return "the gradient buckets' all-reduces end after backward: a smaller --bucket-mb" + bucket +
           " starts them earlier and leaves less to reduce after the last gradient";
  }
  if (group == "tp") {
    return "TP's collectives sit between dependent GEMMs and cannot hide: keep TP inside a node "
           "(NVLink), or a smaller --tp";
  }
  if (group == "pp") {
    return "the stages' sends wait for the neighbouring stage: more --micro-batches, or "
           "--schedule interleaved";
  }
  if (group == "ep") {
    return "the expert dispatch and combine all-to-alls wait for the busiest rank: balance the "
           "routing (ep_imbalance), or overlap them with the shared experts";
  }
  if (group == "cp") {
    return "the ring's K/V transfers outlast the attention they hide behind: longer chunks per "
           "CP rank (a smaller --cp), or --cp-mode a2a";
  }
  return "start the exposed collectives earlier, or behind more compute";
}

std::optional<Finding> exposed_comm(const Input& in) {
  const RankMeans m = rank_means(in.r);
  if (const std::string why = needs_ops_and_compute(in, m); !why.empty())
    return not_evaluated("exposed_comm", why);
  // Waiting at a collective for a later rank, or at a pipeline transfer for the next stage, is
  // exposed too, but it is another rule's: what is left is the transfers themselves.
  const Waits waits = waits_of(in.r);
  const double wait = waits.per_step_ns;
  const double transfer = exposed_transfers_ns(in.r, waits);
  if (m.step_ns <= 0 || transfer <= in.o.max_exposed * m.step_ns) return std::nullopt;
  const GroupTimeRow* worst = nullptr;
  for (const GroupTimeRow& g : in.r.group_times) {
    if (worst == nullptr || g.exposed_ns > worst->exposed_ns) worst = &g;
  }
  Finding f = fired("exposed_comm", transfer, m.step_ns);
  std::string comms;
  f.ops = path_collectives(in.r, 3, &comms);
  f.comm = worst != nullptr ? worst->group : comms;
  f.evidence = ms(m.exposed_ns) + " of communication per step no compute hides (" +
               pct(m.exposed_ns / m.step_ns) + " of the step, mean over " +
               std::to_string(m.ranks) + " ranks), " + ms(wait) +
               " of it waiting at collectives for later ranks (sync_wait's), " + ms(transfer) +
               " transfers (pipeline sends left out: the bubble's)";
  if (worst != nullptr) {
    f.evidence += "; most of it " + worst->group + "'s: " + ms(worst->exposed_ns) +
                  " (worst rank " + std::to_string(worst->exposed_worst_rank) + ": " +
                  ms(worst->exposed_max_ns) + ")";
    f.ranks = std::to_string(worst->exposed_worst_rank);
  }
  if (!f.ops.empty()) f.evidence += "; on the critical path: " + f.ops;
  f.action = exposed_action(in, worst != nullptr ? worst->group : "");
  f.shown_in = in.r.critical_shares.empty() ? "table-group-times" : "table-critical-path";
  return f;
}

// The cause the critical path gives most often for `rank` being late, with how many steps.
struct Cause {
  std::string cause, at;
  int steps = 0;
  double excess_ns = 0;
};
Cause straggler_cause(const Report& r, int rank) {
  std::map<std::string, Cause> causes;
  for (const CriticalStepRow& s : r.critical_steps) {
    if (s.straggler_rank != rank || s.straggler_cause.empty()) continue;
    Cause& c = causes[s.straggler_cause];
    c.cause = s.straggler_cause;
    c.at = s.straggler_at;
    ++c.steps;
    c.excess_ns += std::max(0.0, s.straggler_excess_ns);
  }
  Cause best;
  for (const auto& [name, c] : causes) {
    if (c.steps > best.steps) best = c;
  }
  if (best.steps > 0) best.excess_ns /= best.steps;
  return best;
}

std::optional<Finding> sync_wait(const Input& in) {
  const RankMeans m = rank_means(in.r);
  if (m.ranks == 0) return not_evaluated("sync_wait", kNeedsOps);
  const Waits w = waits_of(in.r);
  if (w.ranks == 0 || m.step_ns <= 0) return std::nullopt;
  const double wait = w.per_step_ns;
  const int n = w.ranks;
  const RankWait* straggler = w.straggler;
  if (wait <= in.o.max_sync_wait * m.step_ns) return std::nullopt;
  Finding f = fired("sync_wait", wait, m.step_ns);
  f.ranks = std::to_string(straggler->rank);
  f.evidence = "ranks wait " + ms(wait) + " per step at collectives for later ranks (" +
               pct(wait / m.step_ns) + " of the step, mean over " + std::to_string(n) +
               " ranks; limit " + pct(in.o.max_sync_wait) + "); rank " +
               std::to_string(straggler->rank) + " (" + straggler->host + ") arrived last at " +
               std::to_string(straggler->times_last) + " of " +
               std::to_string(straggler->collectives) + " collectives and others waited " +
               ms(static_cast<double>(straggler->wait_caused_ns)) + " for it in all";
  const Cause c = straggler_cause(in.r, straggler->rank);
  if (c.steps > 0) {
    f.ops = c.cause;
    f.comm = c.at;
    f.evidence += "; on the critical path it was late at " + c.at + " in " +
                  std::to_string(c.steps) + " of " + std::to_string(in.r.critical_steps.size()) +
                  " steps, after " + c.cause + ", " + ms(c.excess_ns) +
                  " longer than on the other ranks";
    f.action = c.cause.rfind("host gap", 0) == 0
                   ? "rank " + f.ranks + "'s host is late to launch (" + c.cause +
                         "): look for CPU contention, data loading or logging on that host"
                   : "rank " + f.ranks + "'s " + c.cause +
                         " runs slower than the same op elsewhere: check that rank's device "
                         "(clocks, temperature, other processes) or give it less work";
  } else {
    f.action = "rank " + f.ranks +
               " is the straggler: check its device and host, or balance the work among ranks";
  }
  f.shown_in = "table-stragglers";
  return f;
}

std::optional<Finding> compute_busy(const Input& in) {
  const RankMeans m = rank_means(in.r);
  if (const std::string why = needs_ops_and_compute(in, m); !why.empty())
    return not_evaluated("compute_busy", why);
  if (m.step_ns <= 0 || m.comp_ns >= in.o.min_compute_busy * m.step_ns) return std::nullopt;
  // Of the time the device lacks to reach the target, the part no op of any kind fills (the
  // host's gaps): communication and waiting are the other rules'.
  double cost = 0, idle = 0;
  int n = 0;
  for (const RankSummary& s : in.r.ranks) {
    if (s.timed_steps == 0 || s.ops == 0) continue;
    const double short_of = timed_step_ns(s) - s.comp_ns.mean / in.o.min_compute_busy;
    cost += std::clamp(s.idle_ns.mean, 0.0, std::max(0.0, short_of));
    idle += s.idle_ns.mean;
    ++n;
  }
  idle /= n;
  Finding f = fired("compute_busy", cost / n, m.step_ns);
  double gap_ns = 0;
  for (const CriticalStepRow& s : in.r.critical_steps) gap_ns += static_cast<double>(s.gap_ns);
  if (!in.r.critical_steps.empty()) gap_ns /= static_cast<double>(in.r.critical_steps.size());
  std::size_t k = 0;
  for (const CriticalShareRow& c : in.r.critical_shares) {
    if (c.category != "gap" || k == 3) continue;
    f.ops +=
        (k++ ? ", " : "") + c.op + " (rank " + std::to_string(c.rank) + ", " + ms(c.mean_ns) + ")";
  }
  f.evidence = "compute busy " + pct(m.comp_ns / m.step_ns) + " of the step (" + ms(m.comp_ns) +
               " of " + ms(m.step_ns) + ", mean over " + std::to_string(m.ranks) +
               " ranks) against the target " + pct(in.o.min_compute_busy) + "; no op runs for " +
               ms(idle) + " per step";
  if (!in.r.critical_steps.empty()) {
    f.evidence += "; host gaps on the critical path " + ms(gap_ns) + " per step";
    if (!f.ops.empty()) f.evidence += ", before " + f.ops;
  }
  if (gap_ns > 0.3 * (m.step_ns - m.comp_ns) || idle > 0.3 * (m.step_ns - m.comp_ns)) {
    f.action =
        "launch-bound: the host gaps keep the device idle: capture the step in a CUDA graph, "
        "fuse small kernels, or move host work (data loading, logging) off the step";
  } else {
    f.action =
        "the device waits on communication and synchronisation, not the host: see "
        "exposed_comm and sync_wait";
  }
  f.shown_in = "ranks-box";
  return f;
}

// The schedule's own bubble: (p-1)/(v·m + p-1) of the step (GPipe, 1F1B; v model chunks per
// stage interleaved).
double schedule_bubble(const RunFacts& rf, int stages) {
  const int v = rf.schedule == "interleaved" ? std::max(1, rf.virtual_stages) : 1;
  const double p = stages;
  return (p - 1) / (v * rf.micro_batches + p - 1);
}

std::optional<Finding> pipeline_bubble(const Input& in) {
  const std::vector<StageRow>& st = in.r.stages;
  if (st.size() < 2) return std::nullopt;
  if (!in.facts.known) return not_evaluated("pipeline_bubble", "needs the run configuration");
  // The bottleneck stage's (most compute): the other stages' extra idle is waiting for it,
  // stage_imbalance's.
  std::size_t hi = 0;
  for (std::size_t s = 1; s < st.size(); ++s) {
    if (st[s].comp_ns > st[hi].comp_ns) hi = s;
  }
  const double bubble = st[hi].bubble, step = st[hi].step_ns;
  const int p = static_cast<int>(st.size());
  const double expected = schedule_bubble(in.facts, p);
  if (bubble <= expected + in.o.bubble_margin) return std::nullopt;
  Finding f = fired("pipeline_bubble", (bubble - expected) * step, step);
  f.comm = "pp";
  f.evidence = "the slowest stage's (" + std::to_string(hi) + ", most compute) step is " +
               pct(bubble) + " without compute; the " + in.facts.schedule + " schedule of " +
               std::to_string(p) + " stages and " + std::to_string(in.facts.micro_batches) +
               " micro-batches implies " + pct(expected) + " ((p-1)/(m+p-1))";
  RunFacts more = in.facts;
  more.micro_batches *= 2;
  f.action = "more micro-batches per step (--micro-batches " + std::to_string(more.micro_batches) +
             ": the schedule's bubble " + pct(schedule_bubble(more, p)) +
             "); what exceeds the schedule's is waiting on other stages: see stage_imbalance";
  f.shown_in = "table-stages";
  return f;
}

// The whole-layer split of `layers` over stages whose compute beyond their layers is `extra`
// that makes the slowest stage fastest, each layer taking `per_layer`: layers one by one to the
// stage that is then least loaded.
std::vector<int> balanced_split(int layers, const std::vector<double>& extra, double per_layer) {
  std::vector<int> split(extra.size(), 0);
  for (int l = 0; l < layers; ++l) {
    std::size_t best = 0;
    for (std::size_t s = 1; s < extra.size(); ++s) {
      if (extra[s] + split[s] * per_layer < extra[best] + split[best] * per_layer) best = s;
    }
    ++split[best];
  }
  return split;
}

std::string joined(const std::vector<int>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out;
}

std::optional<Finding> stage_imbalance(const Input& in) {
  const std::vector<StageRow>& st = in.r.stages;
  if (st.size() < 2) return std::nullopt;
  double mean = 0;
  std::size_t hi = 0;
  for (std::size_t s = 0; s < st.size(); ++s) {
    mean += st[s].comp_ns;
    if (st[s].comp_ns > st[hi].comp_ns) hi = s;
  }
  mean /= static_cast<double>(st.size());
  if (mean <= 0 || st[hi].comp_ns <= in.o.max_stage_imbalance * mean) return std::nullopt;
  std::string shares;
  for (const StageRow& s : st) shares += (shares.empty() ? "" : " / ") + ms(s.comp_ns);
  const std::vector<int>& layers = in.facts.stage_layers;
  Finding f;
  if (in.facts.known && layers.size() == st.size() && in.facts.layers > 0) {
    // A layer's time from the stage that does least per layer (a middle stage has none of the
    // model's ends, the first stage's embedding is cheap); what each stage does beyond its
    // layers is then its ends.
    double per_layer = -1;
    for (std::size_t s = 0; s < st.size(); ++s) {
      if (layers[s] == 0) continue;
      const double t = st[s].comp_ns / layers[s];
      if (per_layer < 0 || t < per_layer) per_layer = t;
    }
    std::vector<double> extra;
    for (std::size_t s = 0; s < st.size(); ++s)
      extra.push_back(std::max(0.0, st[s].comp_ns - layers[s] * per_layer));
    const std::vector<int> split = balanced_split(in.facts.layers, extra, per_layer);
    double after = 0;
    for (std::size_t s = 0; s < st.size(); ++s)
      after = std::max(after, extra[s] + split[s] * per_layer);
    if (split == layers || after >= st[hi].comp_ns) return std::nullopt;
    // The slowest stage sets each of the schedule's m + p − 1 slots: a step saves its per
    // micro-batch gain that many times.
    const double m = in.facts.micro_batches;
    const double slots = (m + static_cast<double>(st.size()) - 1) / m;
    f = fired("stage_imbalance", (st[hi].comp_ns - after) * slots, st[hi].step_ns);
    f.evidence = "compute per step by stage " + shares + " (stage " + std::to_string(hi) +
                 " max/mean " + num(st[hi].comp_ns / mean) + ") with layers " + joined(layers) +
                 "; a layer takes about " + ms(per_layer) + ", the slowest stage's ends " +
                 ms(extra[hi]) + "; split " + joined(split) + " makes the slowest stage " +
                 ms(after) + ", over (m+p-1)/m = " + num(slots) + " of its time per step";
    f.action = "--pp-layers " + joined(split);
  } else {
    f = fired("stage_imbalance", st[hi].comp_ns - mean, st[hi].step_ns);
    f.evidence = "compute per step by stage " + shares + " (stage " + std::to_string(hi) +
                 " max/mean " + num(st[hi].comp_ns / mean) + ")";
    f.action = "move layers from stage " + std::to_string(hi) + " to the others (--pp-layers)";
  }
  f.comm = "pp";
  f.shown_in = "table-stages";
  return f;
}

std::optional<Finding> ep_imbalance(const Input& in) {
  const GroupTimeRow* worst = nullptr;
  for (const GroupTimeRow& g : in.r.group_times) {
    if (g.recv_imbalance > 0 && (worst == nullptr || g.recv_imbalance > worst->recv_imbalance))
      worst = &g;
  }
  if (worst == nullptr || worst->recv_imbalance <= in.o.max_ep_imbalance) return std::nullopt;
  const RankMeans m = rank_means(in.r);
  const double imb = worst->recv_imbalance;
  // What the others wait for: the busiest rank's rows beyond the mean at the group's rate, the
  // part 1 − 1/imbalance of its all-to-all time.
  const double cost = worst->comm_ns * (1 - 1 / imb);
  Finding f = fired("ep_imbalance", cost, m.step_ns);
  f.comm = worst->group;
  f.ranks = std::to_string(worst->recv_busiest_rank);
  f.bytes = static_cast<std::int64_t>(worst->recv_max_bytes);
  f.ops = "all-to-all(v) (" + num(worst->alltoalls) + " per step)";
  f.evidence = "rank " + f.ranks + " receives " + num(imb) + "x the mean in the all-to-alls on " +
               worst->group + " (" + printed("%.0f", worst->recv_max_bytes) + " B against " +
               printed("%.0f", worst->recv_mean_bytes) + " B per step); the others wait " +
               ms(std::max(0.0, worst->alltoall_wait_ns)) + " per step at them";
  const double c = in.o.capacity_factor;
  if (imb > c) {
    f.action = "--moe-capacity-factor " + num(c) + " caps each rank's rows at " + num(c) +
               "x the mean (now " + num(imb) + "x), cutting that wait to about " +
               pct((c - 1) / (imb - 1)) +
               " of today's at the price of dropped tokens; or a load-balancing loss";
  } else {
    f.action = "balance the routing (an auxiliary load-balancing loss); a capacity factor of " +
               num(imb) + " would only pad every rank to the busiest";
  }
  if (in.facts.known && in.facts.capacity_factor > 0)
    f.action += " (this run: capacity factor " + num(in.facts.capacity_factor) + ")";
  f.shown_in = "table-group-times";
  return f;
}

std::optional<Finding> busbw_low(const Input& in) {
  std::vector<const CollectiveRow*> large;
  for (const CollectiveRow& c : in.r.collectives) {
    if (c.bytes >= in.o.large_message_bytes && c.busbw_gbps > 0) large.push_back(&c);
  }
  if (large.empty()) return std::nullopt;
  if (in.r.peak_busbw_gbps <= 0)
    return not_evaluated("busbw_low", "needs --peak-busbw (the link's bus bandwidth in GB/s)");
  const RankMeans m = rank_means(in.r);
  double steps = 0;
  for (const RankSummary& s : in.r.ranks) steps += s.timed_steps;
  if (in.r.ranks.empty() || steps <= 0) return std::nullopt;
  steps /= static_cast<double>(in.r.ranks.size());
  const double world = static_cast<double>(in.r.ranks.size());
  double cost = 0, worst_cost = 0;
  const CollectiveRow* worst = nullptr;
  for (const CollectiveRow* c : large) {
    if (c->peak_fraction < 0 || c->peak_fraction >= in.o.min_peak_fraction) continue;
    // A rank's calls per step of this row: each instance involves comm_size of the ranks.
    const double calls = static_cast<double>(c->count) * c->comm_size / world / steps;
    const double saved = calls * c->p50_ns * (1 - c->peak_fraction / in.o.min_peak_fraction);
    cost += saved;
    if (worst == nullptr || saved > worst_cost) worst = c, worst_cost = saved;
  }
  if (worst == nullptr) return std::nullopt;
  Finding f = fired("busbw_low", cost, m.step_ns);
  f.ops = worst->collective;
  f.bytes = static_cast<std::int64_t>(worst->bytes);
  f.evidence = worst->collective + " of " + std::to_string(worst->bytes) + " B over " +
               std::to_string(worst->comm_size) + " ranks reaches " + num(worst->busbw_gbps) +
               " GB/s busbw, " + pct(worst->peak_fraction) + " of the link's " +
               num(in.r.peak_busbw_gbps) + " GB/s (limit " + pct(in.o.min_peak_fraction) +
               " for messages of " + std::to_string(in.o.large_message_bytes) + " B and more)";
  if (!worst->algo.empty()) f.evidence += "; NCCL chose " + worst->algo;
  f.action =
      "check NCCL's choice (NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS), that the ranks use the "
      "links expected (NCCL_DEBUG=INFO shows the topology), and that no other traffic shares "
      "them";
  f.shown_in = "busbw-box";
  return f;
}

std::optional<Finding> vocab_alignment(const Input& in) {
  const RunFacts& rf = in.facts;
  if (!rf.known) {
    return not_evaluated("vocab_alignment",
                         "needs the run configuration (the vocabulary): commprof run's files");
  }
  if (rf.vocab <= 0) return std::nullopt;
  const long long multiple = static_cast<long long>(std::max(1, rf.vocab_multiple)) * rf.tp;
  const long long padded = (rf.vocab + multiple - 1) / multiple * multiple;
  const long long per_rank = padded / rf.tp;
  if (per_rank % in.o.vocab_alignment == 0) return std::nullopt;
  // The LM head's GEMMs per step on the ranks of the last stage: an upper bound of what
  // padding saves.
  double head_ns = 0;
  for (const auto& [key, t] : in.r.op_timings) {
    if (key.first == static_cast<int>(Category::kComp) && key.second.rfind("head.", 0) == 0)
      head_ns += t.total_ns;
  }
  double steps = 0;
  for (const RankSummary& s : in.r.ranks) steps += s.timed_steps;
  const double head_ranks = std::max(1.0, static_cast<double>(in.r.ranks.size()) / rf.pp);
  const double per_step =
      steps > 0 ? head_ns / (steps / static_cast<double>(in.r.ranks.size())) / head_ranks : 0;
  Finding f = fired("vocab_alignment", per_step, rank_means(in.r).step_ns);
  f.ops = "head";
  f.evidence = "vocabulary " + std::to_string(rf.vocab) + " gives " + std::to_string(per_rank) +
               " LM-head rows per TP rank, not a multiple of " +
               std::to_string(in.o.vocab_alignment) +
               ": cuBLAS serves such GEMMs with slower kernels; the head's ops take " +
               ms(per_step) + " per step (the most padding can save)";
  f.action = "--make-vocab-size-divisible-by 128 (Megatron's default) pads it to " +
             std::to_string((rf.vocab + 128LL * rf.tp - 1) / (128LL * rf.tp) * 128 * rf.tp);
  f.shown_in = "table-ranks";
  return f;
}

std::optional<Finding> hang(const Input& in) {
  std::vector<const std::string*> lines;
  for (const std::string& w : in.r.warnings) {
    if (w.rfind("hang: ", 0) == 0) lines.push_back(&w);
  }
  if (lines.empty()) return std::nullopt;
  Finding f;
  f.rule = "hang";
  f.status = "fired";
  f.evidence = std::to_string(lines.size()) + " collective(s) never finished: ";
  for (std::size_t i = 0; i < lines.size() && i < 3; ++i)
    f.evidence += (i ? "; " : "") + lines[i]->substr(6);
  f.action =
      "the ranks that never started it are where the job stopped: take their stacks (py-spy "
      "dump, gdb) and look at what they ran after their last finished collective";
  return f;
}

struct FindingRule {
  std::string_view name;
  std::optional<Finding> (*check)(const Input&);
};
constexpr FindingRule kRules[] = {
    {"hang", hang},
    {"exposed_comm", exposed_comm},
    {"overlap_below_target", overlap_below_target},
    {"sync_wait", sync_wait},
    {"compute_busy", compute_busy},
    {"pipeline_bubble", pipeline_bubble},
    {"stage_imbalance", stage_imbalance},
    {"ep_imbalance", ep_imbalance},
    {"busbw_low", busbw_low},
    {"vocab_alignment", vocab_alignment},
};

// A straggler that is the expert-parallel busiest rank, or late after an expert's op, is late for
// the rows the router sent it, not because its device or host is slow: the wait's action is the
// routing's. Measured on the host backend: a Zipf-routed EP run's top finding was sync_wait, its
// own action "check that rank's device" (the hot experts move between steps, so the straggler
// was at times another rank than the one receiving the most over the run).
void attribute_wait_to_routing(std::vector<Finding>& found) {
  auto fired_rule = [&](std::string_view rule) -> Finding* {
    for (Finding& f : found) {
      if (f.rule == rule && f.fired()) return &f;
    }
    return nullptr;
  };
  Finding* wait = fired_rule("sync_wait");
  const Finding* ep = fired_rule("ep_imbalance");
  if (wait == nullptr || ep == nullptr) return;
  static const std::regex kExpertOp(R"(^l[0-9]+\.expert[0-9]+\.)");
  if (wait->ranks != ep->ranks && !std::regex_search(wait->ops, kExpertOp)) return;
  wait->action = "rank " + wait->ranks + " is late for the rows the router sends its experts (" +
                 "ep_imbalance, on " + ep->comm + "): " + ep->action;
}

// A hang first (it costs the run), then by cost; not evaluated last, in rule order.
int rank_of(const Finding& f) { return !f.fired() ? 2 : f.cost_ns < 0 ? 0 : 1; }

int int_of(const nlohmann::ordered_json& j, const char* key, int fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int>() : fallback;
}
double double_of(const nlohmann::ordered_json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}
std::string text_of(const nlohmann::ordered_json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

RunFacts run_facts(const JsonObject& config) {
  const nlohmann::ordered_json& j = config.json();
  RunFacts rf;
  if (text_of(j, "command") != "run") return rf;
  rf.known = true;
  rf.dp_mode = text_of(j, "dp_mode");
  rf.schedule = text_of(j, "schedule");
  rf.tp = std::max(1, int_of(j, "tp", 1));
  rf.pp = std::max(1, int_of(j, "pp", 1));
  rf.virtual_stages = std::max(1, int_of(j, "virtual_stages", 1));
  rf.bucket_mb = double_of(j, "bucket_mb", 0);
  if (const auto it = j.find("stage_layers"); it != j.end() && it->is_array()) {
    for (const auto& n : *it) rf.stage_layers.push_back(n.is_number_integer() ? n.get<int>() : 0);
  }
  if (const auto it = j.find("model"); it != j.end() && it->is_object()) {
    const nlohmann::ordered_json& m = *it;
    rf.micro_batches = std::max(1, int_of(m, "micro_batches", 1));
    rf.layers = int_of(m, "layers", 0);
    rf.vocab = int_of(m, "vocab", 0);
    rf.experts = int_of(m, "experts", 0);
    rf.capacity_factor = double_of(m, "capacity_factor", 0);
    // A run that says how it padded the vocabulary (Megatron's make-vocab-size-divisible-by);
    // before that, every run padded to Megatron's default.
    rf.vocab_multiple = int_of(m, "make_vocab_size_divisible_by", rf.vocab_multiple);
  }
  return rf;
}

RunFacts run_facts_of_file(const std::string& path) {
  try {
    return run_facts(read_rank_header(path).config);
  } catch (const Error&) {
  }
  return {};
}

void add_findings(Report& report, const RunFacts& facts, const FindingOptions& options) {
  const Input in{report, facts, options};
  std::vector<Finding> found;
  for (const FindingRule& rule : kRules) {
    if (std::optional<Finding> f = rule.check(in)) found.push_back(std::move(*f));
  }
  attribute_wait_to_routing(found);
  std::stable_sort(found.begin(), found.end(), [](const Finding& a, const Finding& b) {
    if (rank_of(a) != rank_of(b)) return rank_of(a) < rank_of(b);
    return a.cost_ns > b.cost_ns;
  });
  report.findings = std::move(found);
}

std::vector<std::string_view> finding_rules() {
  std::vector<std::string_view> names;
  for (const FindingRule& r : kRules) names.push_back(r.name);
  return names;
}

bool finding_fired(const Report& report, std::string_view rule) {
  return std::any_of(report.findings.begin(), report.findings.end(),
                     [&](const Finding& f) { return f.rule == rule && f.fired(); });
}

}  // namespace commprof
