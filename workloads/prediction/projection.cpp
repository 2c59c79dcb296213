// SPDX-License-Identifier: MIT
#include "workloads/prediction/projection.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "analysis/graph/critical_path.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/timeline/rank_file.hpp"
#include "workloads/layout.hpp"
#include "workloads/prediction/compute_jitter.hpp"
#include "workloads/prediction/replay.hpp"
#include "workloads/prediction/target_graph.hpp"

namespace commprof {

MeasuredRun load_measured_run(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  std::vector<RankTimeline> ranks;
  try {
    files = expand_rank_inputs(inputs);
    for (const std::string& f : files) ranks.push_back(read_rank_file(f));
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {  // a missing directory, a damaged file: the user's input
    throw ConfigError(e.what());
  }
  if (ranks.empty()) throw ConfigError("no rank files in the input");
  MeasuredRun run = measured_run(std::move(ranks), files.front());
  run.files = files;
  return run;
}

LinkModel own_link_model(const std::vector<LinkSample>& own, const std::optional<LinkModel>& probe,
                         const std::string& what) {
  // The probe's points are the world's (group ""): LinkModel::find takes a communicator kind's
  // own fit first and the probe's where the run issued no such collective.
  std::vector<LinkSample> points = own;
  if (probe) points.insert(points.end(), probe->samples.begin(), probe->samples.end());
  if (points.empty()) return {};
  return fit_link_model(
      std::move(points),
      probe ? what + " and its link probe (" + std::to_string(probe->samples.size()) + " points)"
            : what);
}

MeasuredRun measured_run(std::vector<RankTimeline> ranks, const std::string& first) {
  MeasuredRun run;
  if (ranks.empty()) throw ConfigError("no rank files in the input");
  std::sort(ranks.begin(), ranks.end(),
            [](const RankTimeline& a, const RankTimeline& b) { return a.rank < b.rank; });
  run.config = run_config_from_json(ranks.front().config.json(), first);
  if (run.config.compute_from) {
    throw ConfigError(first +
                      ": the run learned its compute from a trace (--compute-from); its ops' "
                      "times come from that profile, which the rank files do not hold: project "
                      "a run of the modelled compute instead");
  }
  for (const RankTimeline& t : ranks) {
    if (!(t.config == ranks.front().config)) {
      throw ConfigError("rank " + std::to_string(t.rank) + "'s configuration differs from rank " +
                        std::to_string(ranks.front().rank) + "'s: not one run");
    }
  }
  const int world = run.config.workload.layout.world();
  if (static_cast<int>(ranks.size()) != world) {
    throw ConfigError(log::cat("the run had ", world, " ranks (",
                               describe(run.config.workload.layout), ") but the input holds ",
                               ranks.size(), " rank files"));
  }
  StepGraphBuilder builder;
  for (const RankTimeline& t : ranks) builder.add(t);
  const std::vector<StepGraph> graphs = builder.finish();
  run.rates = learn_rates(ranks, graphs);
  std::map<int, std::string> hosts;
  for (const RankTimeline& t : ranks) hosts[t.rank] = t.host;
  for (const StepGraph& g : graphs) {
    std::vector<OpObservation> seen = observe_ops(g, hosts);
    run.observations.insert(run.observations.end(), seen.begin(), seen.end());
  }
  run.own_links = own_link_model(run.rates.collectives, run.config.settings.link_probe,
                                 "the run's own collectives");
  run.figures = what_if(graphs, {});
  return run;
}

MeasuredRun load_source_runs(const std::vector<std::string>& inputs) {
  std::size_t dirs = 0;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(in, ec)) ++dirs;
  }
  if (inputs.size() < 2 || dirs == 0) return load_measured_run(inputs);
  if (dirs != inputs.size()) {
    throw ConfigError(
        "give either result directories (each one run of the same source, combined) or the "
        "rank files of one run, not both");
  }
  std::vector<MeasuredRun> runs;
  for (const std::string& dir : inputs) {
    try {
      runs.push_back(load_measured_run({dir}));
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      // Each run's error names its directory (a rank file's name carries it already).
      throw ConfigError(what.find(dir) != std::string::npos ? what : dir + ": " + what);
    }
    if (runs.size() > 1) check_same_source(runs.front(), inputs.front(), runs.back(), dir);
  }
  return combine_runs(std::move(runs));
}

void add_baseline(MeasuredRun& run, const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  std::vector<RankTimeline> ranks;
  try {
    files = expand_rank_inputs(inputs);
    for (const std::string& f : files) ranks.push_back(read_rank_file(f));
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("--baseline: ") + e.what());
  } catch (const Error& e) {
    throw ConfigError(std::string("--baseline: ") + e.what());
  }
  if (ranks.empty()) throw ConfigError("--baseline: no rank files in the input");
  add_baseline(run, std::move(ranks), files.front());
  run.baseline_files = files;
}

void add_baseline(MeasuredRun& run, std::vector<RankTimeline> ranks, const std::string& first) {
  const std::string where = "--baseline " + first + ": ";
  MeasuredRun base;
  try {
    base = measured_run(std::move(ranks), first);
  } catch (const ConfigError& e) {
    throw ConfigError(where + e.what());
  }
  // The same source: model, options and layout alike but for --no-overlap.
  WorkloadConfig a = run.config.workload, b = base.config.workload;
  a.no_overlap = b.no_overlap = false;
  const RunSettings settings;
  if (run_config_json(a, settings) != run_config_json(b, settings)) {
    throw ConfigError(where + "not a run of the same source (" + workload_name(b.kind) + " at " +
                      layout_text(b.layout) + " against the run's " + workload_name(a.kind) +
                      " at " + layout_text(a.layout) +
                      ", or another model or option): run the same command again, with "
                      "--no-overlap for an un-overlapped reference");
  }
  run.observations.insert(run.observations.end(), base.observations.begin(),
                          base.observations.end());
  // Each source run's slowdown is measured against the same un-overlapped reference.
  for (MeasuredRun& source : run.sources) {
    source.observations.insert(source.observations.end(), base.observations.begin(),
                               base.observations.end());
  }
  run.baseline_steps = base.rates.steps;
  if (run.baseline_files.empty()) run.baseline_files = {first};
}

WorkloadConfig target_workload(const MeasuredRun& run, const ParallelLayout& layout) {
  WorkloadConfig w = run.config.workload;
  w.layout = layout;
  const int axes = (layout.tp > 1) + (layout.pp > 1) + (layout.dp > 1);
  w.kind = axes > 1 || layout.cp > 1 || layout.ep > 1 ? WorkloadKind::kHybrid
           : layout.tp > 1                            ? WorkloadKind::kTp
           : layout.pp > 1                            ? WorkloadKind::kPp
                                                      : WorkloadKind::kDp;
  w.split = StageSplitOptions{};
  w.slow_rank = -1;  // a rank the run slowed on purpose is no rank of the target
  const std::string where = "--layout " + layout_text(layout) + ": ";
  try {
    validate_layout(layout, layout.world(), w.shape);
    validate_workload(w);
  } catch (const ConfigError& e) {
    throw ConfigError(where + e.what());
  }
  return w;
}

namespace {

std::string format_rate(double per_ns, bool flops) {
  char buf[64];
  if (flops) {
    std::snprintf(buf, sizeof buf, "%.3f TFLOP/s", per_ns / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f GB/s", per_ns);
  }
  return buf;
}

// An op's duration from the run's rates, or ConfigError naming its class.
// `alone` (where given) holds each class's rate when alone, which takes the place of its rate over
// every op.
std::int64_t compute_ns(const MeasuredRates& r, const std::map<std::string, double>* alone,
                        const TargetOp& t, Category cat, std::set<std::string>& notes) {
  if (t.work == TargetOp::Work::kFixed) return static_cast<std::int64_t>(t.fixed_ns);
  const bool flops = t.work == TargetOp::Work::kFlops;
  const double work = flops ? t.flops : static_cast<double>(t.bytes);
  if (work <= 0) return 0;
  const std::string cls = t.cls + (flops ? "/flop" : "/byte");
  const auto it = r.by_class.find(cls);
  double rate = it != r.by_class.end() ? it->second.per_ns() : 0.0;
  if (alone != nullptr) {
    if (const auto a = alone->find(cls); a != alone->end() && a->second > 0) rate = a->second;
  }
  if (rate <= 0) {
    // Its kind's mean, else the nearest kind's: copies and memory-bound passes both move bytes
    // through memory, attention and GEMMs both do matrix FLOPs.
    const bool attention = t.cls.find("attention") != std::string::npos;
    const Throughput& kind = !flops      ? (cat == Category::kMem ? r.copy_bytes : r.pass_bytes)
                             : attention ? r.attention_flops
                                         : r.gemm_flops;
    const Throughput& near = !flops      ? (cat == Category::kMem ? r.pass_bytes : r.copy_bytes)
                             : attention ? r.gemm_flops
                                         : r.attention_flops;
    rate = kind.per_ns() > 0 ? kind.per_ns() : near.per_ns();
    if (rate <= 0) {
      throw ConfigError("the run measured no op like '" + t.cls + "' (" +
                        (flops ? "FLOPs" : "bytes") +
                        ") and no op of its kind to take a rate from");
    }
    notes.insert("'" + t.cls + "' was not measured: " +
                 (kind.per_ns() > 0 ? "its kind's" : "the nearest kind's") + " mean rate (" +
                 format_rate(rate, flops) + ")");
  }
  return static_cast<std::int64_t>(std::llround(work / rate));
}

// A collective's time from the link model, or ConfigError naming what no fit covers.
std::int64_t collective_ns(const LinkModel& links, const TargetOp& t, bool own,
                           std::set<std::string>& notes) {
  const LinkClass link = t.inter_node ? LinkClass::kInterNode : LinkClass::kIntraNode;
  std::string fallback;
  const LinkFit* f = links.find(t.collective, link, t.group, &fallback);
  if (f == nullptr) {
    throw ConfigError(std::string("no link fit for ") + link_collective_name(t.collective) +
                      " (on " + t.group + ", " + link_class_name(link) + "): " +
                      (own ? std::string("the run measured none; fit one with `commprof bench "
                                         "--ops ") +
                                 collective_name(t.collective) +
                                 " --fit-links FILE` and pass --links FILE"
                           : "the link model has none (refit it with that collective in "
                             "`commprof bench --ops`)"));
  }
  if (!fallback.empty()) notes.insert(fallback);
  return static_cast<std::int64_t>(std::llround(f->time_us(t.bytes, t.comm_size) * 1e3));
}

// The overlap slowdown the projection applies: measured on each source run against one link
// model, then each factor their median; or on the one run.
void measure_applied_slowdown(const MeasuredRun& run, const LinkModel& links, Projection& p) {
  if (run.sources.size() > 1) {
    std::vector<OverlapSlowdown> each;
    for (const MeasuredRun& source : run.sources)
      each.push_back(measure_slowdown(source.observations, links));
    p.slowdown = combine_slowdowns(each, &p.slowdown_figures);
  } else {
    p.slowdown = measure_slowdown(run.observations, links);
  }
}

// Each target op's time alone (base), its slowdown per unit of overlap (slope) and the host gap
// before it.
struct OpDurations {
  std::vector<double> base, slope;
  std::vector<std::int64_t> gaps;
};

OpDurations op_durations(const MeasuredRun& run, const TargetGraph& tg, const LinkModel& links,
                         bool own, const Projection& p, std::set<std::string>& notes) {
  const StepGraph& g = tg.graph;
  const std::vector<double>& spread = run.rates.rank_compute;
  OpDurations d;
  d.base.assign(g.ops.size(), 0.0);
  d.slope.assign(g.ops.size(), 0.0);
  d.gaps.assign(g.ops.size(), 0);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const TargetOp& t = tg.ops[i];
    d.gaps[i] = run.rates.gap_ns[index_of(g.ops[i].category)];
    if (t.work == TargetOp::Work::kCollective) {
      if (own && links.fits.empty()) {
        throw ConfigError(
            "the run measured no collective to fit a link model to: pass --links FILE (commprof "
            "bench --fit-links FILE writes one)");
      }
      d.base[i] = static_cast<double>(collective_ns(links, t, own, notes));
      if (p.slowdown_applied) {
        const SlowdownFactor* f =
            p.slowdown.comm_factor({t.collective, t.group, size_class(t.bytes), t.inter_node});
        if (f != nullptr) {
          d.base[i] *= f->alone;
          d.slope[i] = f->slowdown;
        }
      }
    } else {
      d.base[i] = static_cast<double>(
          compute_ns(run.rates, p.slowdown_applied ? &p.slowdown.alone_rate : nullptr, t,
                     g.ops[i].category, notes));
      if (p.rank_spread_applied && g.ops[i].category == Category::kComp) {
        d.base[i] *= spread[static_cast<std::size_t>(g.ops[i].rank) % spread.size()];
      }
      if (p.slowdown_applied && g.ops[i].category == Category::kComp &&
          t.work != TargetOp::Work::kFixed) {
        d.slope[i] = p.slowdown.comp_factor(t.cls + (t.flops > 0 ? "/flop" : "/byte")).slowdown;
      }
    }
  }
  return d;
}

// What the slowdown did to the COMP and COMM ops: their time alone against the time replayed,
// and how many were overlapped, by how much.
void tally_applied_slowdown(const StepGraph& g, const std::vector<double>& base,
                            const SlowdownReplay& r, Projection& p) {
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].category == Category::kMem) continue;
    AppliedSlowdown& a = g.ops[i].category == Category::kComp ? p.applied_comp : p.applied_comm;
    ++a.ops;
    a.base_ns += base[i];
    a.applied_ns += static_cast<double>(r.model.op_ns[i]);
    if (r.overlap[i] >= kAloneOverlap) {
      ++a.overlapped;
      a.mean_overlap += r.overlap[i];
    }
  }
  for (AppliedSlowdown* a : {&p.applied_comp, &p.applied_comm}) {
    if (a->overlapped > 0) a->mean_overlap /= static_cast<double>(a->overlapped);
  }
}

// The step replayed with the run's compute jitter drawn over `draws` replays: its mean outcome
// and path take the steady replay's place.
void apply_jitter(const StepGraph& g, const ReplayModel& model, const std::vector<double>& jitter,
                  int draws, Projection& p) {
  const JitterReplay j = replay_with_jitter(g, model, jitter, draws);
  p.jitter_draws = j.draws;
  p.outcome = j.mean;
  p.path_ns = static_cast<std::int64_t>(std::llround(j.path_ns));
  p.step_p10_ns = j.step_p10_ns;
  p.step_p90_ns = j.step_p90_ns;
  p.jitter_p10 = j.sample_p10;
  p.jitter_p90 = j.sample_p90;
  p.jitter_samples = jitter.size();
}

// The replayed communication per communicator kind: calls, time, bus bytes, collectives.
std::vector<ProjectedComm> comm_per_group(const TargetGraph& tg, const ReplayModel& model) {
  const StepGraph& g = tg.graph;
  std::map<std::string, ProjectedComm> comms;
  std::map<std::string, std::set<std::string>> names;
  auto count = [&](std::size_t op, double bus_bytes) {
    const TargetOp& t = tg.ops[op];
    ProjectedComm& pc = comms[t.group];
    pc.group = t.group;
    ++pc.calls;
    pc.time_ns += static_cast<double>(model.op_ns[op]);
    pc.bus_bytes += bus_bytes;
    pc.inter_node = pc.inter_node || t.inter_node;
    names[t.group].insert(link_collective_name(t.collective));
  };
  for (const GraphCollective& c : g.collectives) {
    if (c.members.empty()) continue;
    const auto first = static_cast<std::size_t>(c.members.front());
    const TargetOp& t = tg.ops[first];
    count(first, static_cast<double>(t.bytes) * link_bus_factor(t.collective, t.comm_size));
  }
  // A P2P op counts once, on its sending side, with the bytes it sends (its bytes are those of
  // every transfer it holds, sent and received).
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const GraphOp& op = g.ops[i];
    if (op.send_to.empty()) continue;
    const double share = static_cast<double>(op.send_to.size()) /
                         static_cast<double>(op.send_to.size() + op.recv_from.size());
    count(i, static_cast<double>(tg.ops[i].bytes) * share);
  }
  std::vector<ProjectedComm> out;
  for (auto& [group, pc] : comms) {
    for (const std::string& n : names[group])
      pc.collectives += (pc.collectives.empty() ? "" : ",") + n;
    out.push_back(pc);
  }
  return out;
}

}  // namespace

Projection project(const MeasuredRun& run, const ParallelLayout& layout,
                   const ProjectionOptions& options) {
  const WorkloadConfig w = target_workload(run, layout);
  const bool own = options.links == nullptr;
  const LinkModel& links = own ? run.own_links : *options.links;
  TargetGraph tg = build_target_graph(w, options.gpus_per_node);
  const StepGraph& g = tg.graph;
  std::set<std::string> notes;
  Projection p;
  p.slowdown_applied = options.overlap_slowdown;
  if (p.slowdown_applied) measure_applied_slowdown(run, links, p);
  p.rank_spread_applied = options.rank_spread && !run.rates.rank_compute.empty();
  OpDurations d = op_durations(run, tg, links, own, p, notes);
  const SlowdownReplay r = replay_with_slowdown(g, std::move(d.gaps), d.base, d.slope);
  p.step_alone_ns = r.step_alone_ns;
  p.iterations = r.replays;
  p.converged = r.settled;
  if (!r.settled) {
    notes.insert(log::cat("the overlap slowdown did not settle in ", r.replays,
                          " replays (the step still moved by more than 0.1%): the last is "
                          "printed"));
  }
  if (p.slowdown_applied) tally_applied_slowdown(g, d.base, r, p);
  p.layout = layout;
  p.ranks = layout.world();
  p.nodes = tg.nodes;
  p.ops = static_cast<std::int64_t>(g.ops.size());
  p.outcome = step_outcome(g, r.times);
  p.path_ns = critical_path(g, r.times).length_ns();
  p.step_steady_ns = p.outcome.step_ns;
  if (options.jitter_draws > 0 && !run.rates.compute_jitter.empty()) {
    apply_jitter(g, r.model, run.rates.compute_jitter, options.jitter_draws, p);
  }
  p.comms = comm_per_group(tg, r.model);
  p.notes.assign(notes.begin(), notes.end());
  return p;
}

std::vector<Projection> sweep_layouts(const MeasuredRun& run, int gpus,
                                      const ProjectionOptions& options,
                                      std::vector<std::string>* refused) {
  if (gpus < 1) throw ConfigError("--sweep needs at least 1 GPU");
  const ParallelLayout measured = run.config.workload.layout;
  // Expert parallelism only where the model has experts; the experts' tensor parallelism as the
  // run set it.
  const bool experts = run.config.workload.shape.moe();
  std::vector<Projection> out;
  for (int tp = 1; tp <= gpus; ++tp) {
    for (int pp = 1; tp * pp <= gpus; ++pp) {
      for (int cp = 1; tp * pp * cp <= gpus; ++cp) {
        const int dp = gpus / (tp * pp * cp);
        if (tp * pp * cp * dp != gpus) continue;
        for (int ep = 1; ep <= (experts ? tp * cp * dp : 1); ++ep) {
          if ((tp * cp * dp) % ep != 0) continue;
          ParallelLayout l;
          l.tp = tp;
          l.pp = pp;
          l.cp = cp;
          l.dp = dp;
          l.ep = ep;
          l.etp = measured.etp;
          try {
            out.push_back(project(run, l, options));
          } catch (const ConfigError& e) {
            // Each refusal names its layout (a missing link fit does not say which one).
            std::string why = e.what();
            if (why.rfind("--layout ", 0) != 0) why = "--layout " + layout_text(l) + ": " + why;
            if (refused != nullptr) refused->push_back(why);
          }
        }
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Projection& a, const Projection& b) {
    return a.outcome.step_ns < b.outcome.step_ns;
  });
  return out;
}

}  // namespace commprof
