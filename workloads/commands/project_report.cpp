// SPDX-License-Identifier: MIT
#include "workloads/commands/project_report.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "analysis/report/text_table.hpp"
#include "src/core/log.hpp"
#include "workloads/layout.hpp"

namespace commprof {
namespace {

constexpr const char* kProjectionSchema = "commprof.projection";

std::string ms(double ns) { return format_number("%.3f", ns / 1e6); }
std::string pct(const std::optional<double>& ratio) {
  return ratio ? format_number("%.1f", 100.0 * *ratio) : "n/a";
}

std::string source_line(const MeasuredRun& run) {
  const WorkloadConfig& w = run.config.workload;
  const ModelShape& s = w.shape;
  return log::cat("# measured: ", workload_name(w.kind), " at ", layout_text(w.layout), " (",
                  w.layout.world(), " ranks on ", run.rates.hosts, " host(s)), model ", s.name,
                  " (", s.layers, " layers, h ", s.hidden, ", seq ", s.seq, ", micro-batch ",
                  s.micro_batch, " x ", s.micro_batches, ", ", dtype_name(s.dtype), "), ",
                  run.rates.steps, " measured step(s) with per-op timing",
                  run.sources.size() > 1
                      ? log::cat(" in all, over ", run.sources.size(), " runs of this source")
                      : std::string(),
                  "\n");
}

std::string figure_value(double v) {
  const double a = std::fabs(v);
  return format_number(a != 0 && a < 0.01 ? "%.3g" : "%.3f", v);
}

std::string spread_text(const CombinedFigure& f) {
  if (f.runs < 2) return "-";
  return f.relative ? format_number("%.1f", 100.0 * f.spread()) + "%"
                    : format_number("%.3f", f.spread());
}

// Where several source runs were combined: each one's step, then every figure the projection
// took from them with the runs it came from and their range.
void sources_text(std::ostream& os, const MeasuredRun& run, const ProjectionBasis& b,
                  const std::vector<CombinedFigure>* slowdown) {
  if (run.sources.size() < 2) return;
  os << "\n## Source runs: " << run.sources.size()
     << " runs of one source; each figure the median over the runs that measured it\n"
        "# the run is what varies on a shared machine (every op of a slow run is slow together),"
        " so each run's figure is one sample; spread: max / min - 1, of a slowdown max - min\n";
  std::vector<std::vector<std::string>> runs = {{"run", "steps", "step(ms)", "input"}};
  for (std::size_t k = 0; k < run.sources.size(); ++k) {
    const MeasuredRun& s = run.sources[k];
    runs.push_back({std::to_string(k + 1), std::to_string(s.rates.steps),
                    ms(s.figures.measured.step_ns),
                    k < b.inputs.size() ? b.inputs[k] : s.files.front()});
  }
  write_table(os, runs);
  std::vector<std::vector<std::string>> rows = {
      {"figure", "unit", "runs", "median", "min", "max", "spread"}};
  auto add = [&](const CombinedFigure& f) {
    rows.push_back({f.name, f.unit, std::to_string(f.runs), figure_value(f.median),
                    figure_value(f.min), figure_value(f.max), spread_text(f)});
  };
  for (const CombinedFigure& f : run.combined) add(f);
  if (slowdown != nullptr) {
    for (const CombinedFigure& f : *slowdown) add(f);
  }
  write_table(os, rows);
}

nlohmann::ordered_json figures_json(const std::vector<CombinedFigure>& figures) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const CombinedFigure& f : figures) {
    list.push_back({{"figure", f.name},
                    {"unit", f.unit},
                    {"runs", f.runs},
                    {"median", f.median},
                    {"min", f.min},
                    {"max", f.max},
                    {"spread", f.spread()},
                    {"spread_is", f.relative ? "max / min - 1" : "max - min"}});
  }
  return list;
}

// `p`: any of the projections printed (they share their options), or nullptr.
void basis_lines(std::ostream& os, const MeasuredRun& run, const ProjectionBasis& b,
                 const Projection* p) {
  const bool spread = p != nullptr && p->rank_spread_applied;
  const MeasuredRates& r = run.rates;
  os << source_line(run);
  os << "# compute: the " << (run.sources.size() > 1 ? "runs' median" : "run's measured")
     << " rate per op class (" << r.by_class.size()
     << " classes: FLOP/ns for GEMMs and attention, B/ns for memory-bound ops and copies), "
        "times the target op's FLOPs or bytes\n";
  if (b.links.empty()) {
    os << "# collectives: a link model fitted to the "
       << (run.sources.size() > 1 ? "runs'" : "run's")
       << " own collectives, per communicator kind (" << r.collectives.size()
       << (run.sources.size() > 1 ? " points, each the median over the runs" : " points")
       << (run.config.settings.link_probe
               ? log::cat(", and the link probe's ", run.config.settings.link_probe->samples.size(),
                          " over the world for what the run did not issue")
               : std::string())
       << "; no --links given): time = latency x ring steps + S x busbw factor / busbw\n";
  } else {
    os << "# collectives: the link model " << b.links
       << ": time = latency x ring steps + S x busbw factor / busbw\n";
  }
  os << "# nodes: " << b.gpus_per_node_why << '\n';
  os << "# applied: the " << (run.sources.size() > 1 ? "runs' median of each run's" : "run's")
     << " mean host gap before each op (COMP "
     << format_number("%.1f", static_cast<double>(r.gap_ns[0]) / 1e3) << " us, COMM "
     << format_number("%.1f", static_cast<double>(r.gap_ns[1]) / 1e3) << " us, MEM "
     << format_number("%.1f", static_cast<double>(r.gap_ns[2]) / 1e3) << " us)\n";
  if (!run.baseline_files.empty()) {
    os << "# baseline: " << run.baseline_files.size() << " rank file(s) from "
       << run.baseline_files.front() << ", " << run.baseline_steps
       << " measured step(s): its ops count as alone in the overlap slowdown\n";
  }
  if (spread && !r.rank_compute.empty()) {
    const auto [lo, hi] = std::minmax_element(r.rank_compute.begin(), r.rank_compute.end());
    os << "# applied: each rank's compute speed on the same work (COMP time over every rank's "
          "class rates), target rank r as the run's rank r mod "
       << r.rank_compute.size() << ": from " << format_number("%+.1f", 100.0 * (*lo - 1)) << "% to "
       << format_number("%+.1f", 100.0 * (*hi - 1)) << "%\n";
  }
  if (p != nullptr && p->jitter_draws > 0) {
    os << "# applied: the steps' compute jitter (each rank's compute in each measured step over "
          "its own mean, "
       << p->jitter_samples << " samples, 10th to 90th percentile "
       << format_number("%.3f", p->jitter_p10) << " to " << format_number("%.3f", p->jitter_p90)
       << "x): " << p->jitter_draws
       << " replays, each target rank's compute scaled by one sample drawn for it; the "
          "figures are their means (one replay at the mean speeds: step "
       << ms(static_cast<double>(p->step_steady_ns)) << " ms)\n";
  } else if (p != nullptr && !r.compute_jitter.empty()) {
    os << "# not applied: the steps' compute jitter (--jitter-draws 0)\n";
  }
  os << "# not applied: " << (spread ? "" : "the ranks' compute spread (--no-rank-spread); ")
     << "the ranks' step spread as such (measured: the slowest rank's mean step "
     << format_number("%.1f", 100.0 * r.step_spread)
     << "% above the fastest's; the replay starts every rank together); CPU or link contention "
        "that grows with the ranks per node\n";
  if (run.sources.size() > 1) {
    os << "# the source runs themselves: measured step";
    for (std::size_t k = 0; k < run.sources.size(); ++k)
      os << (k == 0 ? " " : ", ") << ms(run.sources[k].figures.measured.step_ns);
    os << " ms; the run of median step replayed from its own graph "
       << ms(run.figures.replayed.step_ns) << " ms\n";
  } else {
    os << "# the run itself: measured step " << ms(run.figures.measured.step_ns)
       << " ms, replayed from its own graph " << ms(run.figures.replayed.step_ns) << " ms\n";
  }
}

std::string factor_text(double x) { return format_number("%.3f", x); }

// The measured factors and what they did to the predicted step.
void slowdown_text(std::ostream& os, const Projection& p) {
  if (!p.slowdown_applied) {
    os << "\n# overlap slowdown: not applied (--no-overlap-slowdown): every op takes its time "
          "alone\n";
    return;
  }
  const OverlapSlowdown& s = p.slowdown;
  os << "\n## Overlap slowdown: measured on the run, applied in the replay\n"
        "# t = reference x alone x (1 + slowdown x overlap); overlap = share of the op's time "
        "beside the other kind of work on its rank (COMP beside COMM, COMM from its last arrival "
        "beside COMP); ops under "
     << format_number("%.0f", 100.0 * kAloneOverlap)
     << "% overlap count as alone. COMP's reference: its class's rate when alone; COMM's: the "
        "link model\n";
  std::vector<std::vector<std::string>> rows = {
      {"ops", "alone ops", "overlapped ops", "mean overlap(%)", "alone x", "slowdown", "applied"}};
  auto signed_factor = [](const SlowdownFactor& f) {
    return f.measured_slowdown ? format_number("%+.3f", f.slowdown) : std::string("n/a");
  };
  for (const auto& [kind, f] : s.comp_pooled) {
    rows.push_back({"COMP, every " + kind + " class (pooled)", "-",
                    std::to_string(f.overlapped_ops), format_number("%.1f", 100.0 * f.mean_overlap),
                    "1.000", signed_factor(f), "below " + std::to_string(kMinClassOps) + " ops"});
  }
  for (const auto& [cls, f] : s.comp) {
    if (f.overlapped_ops == 0) continue;
    const bool own = &s.comp_factor(cls) == &f;
    rows.push_back({"COMP " + cls, std::to_string(f.alone_ops), std::to_string(f.overlapped_ops),
                    format_number("%.1f", 100.0 * f.mean_overlap), "1.000", signed_factor(f),
                    own ? "own" : "pooled"});
  }
  for (const auto& [k, f] : s.comm) {
    rows.push_back({log::cat("COMM ", k.collective, " ", k.group, " ",
                             size_class_name(k.size_class), k.inter_node ? " inter_node" : ""),
                    std::to_string(f.alone_ops), std::to_string(f.overlapped_ops),
                    format_number("%.1f", 100.0 * f.mean_overlap), factor_text(f.alone),
                    format_number("%+.3f", f.slowdown),
                    f.measured_slowdown ? "own" : "slowdown from its kind"});
  }
  write_table(os, rows);
  if (s.comm_without_fit > 0) {
    os << "# " << s.comm_without_fit << " COMM op(s) no link fit covers were left out\n";
  }
  os << "# applied in the target's replay (" << p.iterations << " replay(s)"
     << (p.converged ? ", settled" : ", not settled") << "): step with every op alone "
     << ms(static_cast<double>(p.step_alone_ns)) << " ms, with the slowdown "
     << ms(static_cast<double>(p.outcome.step_ns)) << " ms\n";
  std::vector<std::vector<std::string>> applied = {
      {"target ops", "ops", "overlapped", "mean overlap(%)", "alone(ms)", "applied(ms)"}};
  for (const auto& [name, a] : {std::pair{"COMP", &p.applied_comp}, {"COMM", &p.applied_comm}}) {
    applied.push_back({name, std::to_string(a->ops), std::to_string(a->overlapped),
                       format_number("%.1f", 100.0 * a->mean_overlap), ms(a->base_ns),
                       ms(a->applied_ns)});
  }
  write_table(os, applied);
}

nlohmann::ordered_json factor_json(const SlowdownFactor& f) {
  return {{"alone_ops", f.alone_ops},       {"overlapped_ops", f.overlapped_ops},
          {"mean_overlap", f.mean_overlap}, {"alone", f.alone},
          {"slowdown", f.slowdown},         {"slowdown_measured", f.measured_slowdown}};
}

nlohmann::ordered_json slowdown_json(const Projection& p) {
  nlohmann::ordered_json j;
  j["applied"] = p.slowdown_applied;
  if (!p.slowdown_applied) return j;
  const OverlapSlowdown& s = p.slowdown;
  j["alone_below_overlap"] = kAloneOverlap;
  j["comp_min_class_ops"] = kMinClassOps;
  nlohmann::ordered_json pooled = nlohmann::ordered_json::object();
  for (const auto& [kind, f] : s.comp_pooled) pooled[kind] = factor_json(f);
  j["comp_pooled"] = pooled;
  nlohmann::ordered_json comp = nlohmann::ordered_json::object();
  for (const auto& [cls, f] : s.comp) {
    comp[cls] = factor_json(f);
    comp[cls]["applied"] = &s.comp_factor(cls) == &f ? "own" : "pooled";
  }
  j["comp"] = comp;
  nlohmann::ordered_json comm = nlohmann::ordered_json::array();
  for (const auto& [k, f] : s.comm) {
    nlohmann::ordered_json e = {{"collective", k.collective},
                                {"group", k.group},
                                {"size_class", size_class_name(k.size_class)},
                                {"link", k.inter_node ? "inter_node" : "intra_node"}};
    e.update(factor_json(f));
    comm.push_back(e);
  }
  j["comm"] = comm;
  j["comm_without_fit"] = s.comm_without_fit;
  j["source_runs_figures"] = figures_json(p.slowdown_figures);
  j["replays"] = p.iterations;
  j["settled"] = p.converged;
  j["step_time_alone_ns"] = p.step_alone_ns;
  for (const auto& [name, a] :
       {std::pair{"applied_comp", &p.applied_comp}, {"applied_comm", &p.applied_comm}}) {
    j[name] = {{"ops", a->ops},
               {"overlapped", a->overlapped},
               {"mean_overlap", a->mean_overlap},
               {"alone_ns", a->base_ns},
               {"applied_ns", a->applied_ns}};
  }
  return j;
}

nlohmann::ordered_json json_or_null(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json figures_json(const StepOutcome& o, std::int64_t path_ns) {
  return {{"step_time_ns", o.step_ns},
          {"exposed_comm_ns", o.exposed_comm_ns},
          {"comm_busy_ns", o.comm_ns},
          {"overlap", json_or_null(o.overlap)},
          {"critical_path_ns", path_ns}};
}

nlohmann::ordered_json projection_json(const Projection& p) {
  nlohmann::ordered_json j;
  j["layout"] = layout_text(p.layout);
  j["ranks"] = p.ranks;
  j["nodes"] = p.nodes;
  j["ops"] = p.ops;
  j["predicted"] = figures_json(p.outcome, p.path_ns);
  nlohmann::ordered_json comms = nlohmann::ordered_json::array();
  for (const ProjectedComm& c : p.comms) {
    comms.push_back({{"group", c.group},
                     {"collectives", c.collectives},
                     {"calls", c.calls},
                     {"time_ns", c.time_ns},
                     {"bus_bytes", c.bus_bytes},
                     {"busbw_gbps", c.busbw_gbps()},
                     {"link", c.inter_node ? "inter_node" : "intra_node"}});
  }
  j["communicators"] = comms;
  j["compute_jitter"] = {{"draws", p.jitter_draws},
                         {"samples", p.jitter_samples},
                         {"sample_p10", p.jitter_p10},
                         {"sample_p90", p.jitter_p90},
                         {"step_at_mean_speeds_ns", p.step_steady_ns},
                         {"step_p10_ns", p.step_p10_ns},
                         {"step_p90_ns", p.step_p90_ns}};
  j["overlap_slowdown"] = slowdown_json(p);
  j["notes"] = p.notes;
  return j;
}

// Each source run and the figures combined from them: one run where a single one was read.
nlohmann::ordered_json source_runs_json(const MeasuredRun& run, const ProjectionBasis& b) {
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  if (run.sources.size() < 2) {
    runs.push_back({{"input", b.inputs.empty() ? std::string() : b.inputs.front()},
                    {"measured_steps", run.rates.steps},
                    {"measured_step_time_ns", run.figures.measured.step_ns}});
  }
  for (std::size_t k = 0; run.sources.size() > 1 && k < run.sources.size(); ++k) {
    const MeasuredRun& s = run.sources[k];
    runs.push_back({{"input", k < b.inputs.size() ? b.inputs[k] : s.files.front()},
                    {"measured_steps", s.rates.steps},
                    {"measured_step_time_ns", s.figures.measured.step_ns}});
  }
  return {{"runs", runs},
          {"combined_by", run.sources.size() > 1 ? "median over the runs" : "one run"},
          {"figures", figures_json(run.combined)}};
}

nlohmann::ordered_json basis_json(const MeasuredRun& run, const ProjectionBasis& b) {
  const MeasuredRates& r = run.rates;
  return {
      {"inputs", b.inputs},
      {"measured_layout", layout_text(run.config.workload.layout)},
      {"measured_steps", r.steps},
      {"links", b.links.empty() ? nlohmann::ordered_json("the run's own collectives")
                                : nlohmann::ordered_json(b.links)},
      {"gpus_per_node", b.gpus_per_node},
      {"applied",
       {{"host_gap_ns", {{"COMP", r.gap_ns[0]}, {"COMM", r.gap_ns[1]}, {"MEM", r.gap_ns[2]}}}}},
      {"baseline", run.baseline_files},
      {"not_applied",
       {{"rank_step_spread", r.step_spread}, {"contention_with_ranks_per_node", "not modelled"}}},
      {"run_measured_step_time_ns", run.figures.measured.step_ns},
      {"run_replayed_step_time_ns", run.figures.replayed.step_ns},
      {"source_runs", source_runs_json(run, b)}};
}

}  // namespace

std::optional<double> error_pct(double predicted, double measured) {
  if (measured == 0) return std::nullopt;
  return 100.0 * (predicted - measured) / measured;
}

namespace {

// (predicted − measured) / measured as "+1.2%", or "n/a" where it has no value.
std::string error_text(double predicted, double measured) {
  const std::optional<double> e = error_pct(predicted, measured);
  return e ? format_number("%+.1f", *e) + "%" : std::string("n/a");
}

// The projection's time of a communicator kind's collectives in the step (0: none there).
double projected_ns(const Projection& p, const std::string& group) {
  for (const ProjectedComm& c : p.comms) {
    if (c.group == group) return c.time_ns;
  }
  return 0.0;
}

// Every validation run's step and the prediction's error against it, and the runs' spread: an
// error inside the spread is the machine's as much as the projection's.
void runs_text(std::ostream& os, double predicted, const Validation& v) {
  double lo = 0.0, hi = 0.0;
  bool first = true;
  os << "\n## Validation runs (the table above compares with the run of median step)\n";
  std::vector<std::vector<std::string>> rows = {{"run", "step(ms)", "error", "rank files"}};
  int k = 0;
  for (const MeasuredValidation& r : v.runs) {
    const double step = r.figures.step_ns;
    lo = first ? step : std::min(lo, step);
    hi = first ? step : std::max(hi, step);
    first = false;
    rows.push_back({std::to_string(++k), ms(step), error_text(predicted, step), r.out_dir});
  }
  write_table(os, rows);
  const std::optional<double> spread = error_pct(hi, lo);
  os << "# the runs' own spread: slowest step " << (spread ? format_number("%.1f", *spread) : "n/a")
     << "% above the fastest; the prediction "
     << (predicted >= lo && predicted <= hi ? "lies within" : "lies outside")
     << " the measured range\n";
}

// The communication library's own estimate of the validation run's collectives, beside the
// projection's link model and what the run measured.
void estimates_text(std::ostream& os, const Projection& p, const Validation& v) {
  if (v.estimate_model.empty()) {
    os << "# the library's own estimate: none (" << v.no_estimate_why << ")\n";
    return;
  }
  os << "\n## Collectives per communicator kind (one step): the projection, " << v.estimate_model
     << " (each call on its own) and the validation run\n"
     << "# times summed over the step's instances, each from its last arrival; error against "
        "measured\n";
  std::vector<std::vector<std::string>> rows = {{"group", "calls", "estimated", "projected(ms)",
                                                 "library(ms)", "measured(ms)", "projected err",
                                                 "library err"}};
  for (const EstimateRow& r : v.estimates) {
    const double proj = projected_ns(p, r.group);
    rows.push_back({r.group, std::to_string(r.calls), std::to_string(r.estimated), ms(proj),
                    r.estimated > 0 ? ms(r.estimate_ns) : "n/a", ms(r.measured_ns),
                    proj > 0 ? error_text(proj, r.measured_ns) : "n/a",
                    r.estimated == r.calls ? error_text(r.estimate_ns, r.measured_ns) : "n/a"});
  }
  write_table(os, rows);
}

nlohmann::ordered_json estimates_json(const Projection& p, const Validation& v) {
  nlohmann::ordered_json j;
  j["model"] = v.estimate_model.empty() ? nlohmann::ordered_json(nullptr)
                                        : nlohmann::ordered_json(v.estimate_model);
  if (v.estimate_model.empty()) j["none_because"] = v.no_estimate_why;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const EstimateRow& r : v.estimates) {
    rows.push_back({{"group", r.group},
                    {"calls", r.calls},
                    {"estimated_calls", r.estimated},
                    {"projected_ns", projected_ns(p, r.group)},
                    {"estimate_ns", r.estimated > 0 ? nlohmann::ordered_json(r.estimate_ns)
                                                    : nlohmann::ordered_json(nullptr)},
                    {"measured_ns", r.measured_ns}});
  }
  j["groups"] = rows;
  return j;
}

}  // namespace

void write_projection_text(std::ostream& os, const MeasuredRun& run, const ProjectionBasis& b,
                           const Projection& p, const Validation* v) {
  os << "# commprof project: " << layout_text(p.layout) << " (" << describe(p.layout) << ", "
     << p.ranks << " ranks on " << p.nodes << " node(s)), one step replayed: " << p.ops << " ops\n";
  basis_lines(os, run, b, &p);
  for (const std::string& n : p.notes) os << "# borrowed: " << n << '\n';
  std::vector<std::vector<std::string>> rows = {{"figure", "predicted"}};
  rows.push_back({"step (ms)", ms(static_cast<double>(p.outcome.step_ns))});
  rows.push_back({"exposed comm (ms)", ms(p.outcome.exposed_comm_ns)});
  rows.push_back({"COMM busy (ms)", ms(p.outcome.comm_ns)});
  rows.push_back({"overlap (%)", pct(p.outcome.overlap)});
  rows.push_back({"critical path (ms)", ms(static_cast<double>(p.path_ns))});
  if (p.jitter_draws > 0) {
    rows.push_back({"one step, 10th pct (ms)", ms(static_cast<double>(p.step_p10_ns))});
    rows.push_back({"one step, 90th pct (ms)", ms(static_cast<double>(p.step_p90_ns))});
  }
  write_table(os, rows);
  if (!p.comms.empty()) {
    os << "\n## Predicted collectives per communicator kind (one step)\n";
    std::vector<std::vector<std::string>> comms = {
        {"group", "collectives", "calls", "time(ms)", "busbw(GB/s)", "link"}};
    for (const ProjectedComm& c : p.comms) {
      comms.push_back({c.group, c.collectives, std::to_string(c.calls), ms(c.time_ns),
                       format_number("%.3f", c.busbw_gbps()),
                       c.inter_node ? "inter_node" : "intra_node"});
    }
    write_table(os, comms);
  }
  sources_text(os, run, b, &p.slowdown_figures);
  slowdown_text(os, p);
  if (v == nullptr) return;
  os << "\n## Validation: `commprof run` at " << layout_text(p.layout) << ", " << v->steps
     << " measured steps after " << v->warmup_steps << " warm-up, rank files in " << v->out_dir
     << "\n# error = (predicted - measured) / measured; overlap's in percentage points\n";
  std::vector<std::vector<std::string>> cmp = {{"figure", "predicted", "measured", "error"}};
  const double step = static_cast<double>(p.outcome.step_ns);
  cmp.push_back(
      {"step (ms)", ms(step), ms(v->measured.step_ns), error_text(step, v->measured.step_ns)});
  cmp.push_back({"exposed comm (ms)", ms(p.outcome.exposed_comm_ns),
                 ms(v->measured.exposed_comm_ns),
                 error_text(p.outcome.exposed_comm_ns, v->measured.exposed_comm_ns)});
  const std::optional<double> a = p.outcome.overlap, m = v->measured.overlap;
  cmp.push_back({"overlap (%)", pct(a), pct(m),
                 a && m ? format_number("%+.1f", 100.0 * (*a - *m)) + " pp" : "n/a"});
  write_table(os, cmp);
  if (v->runs.size() > 1) runs_text(os, step, *v);
  estimates_text(os, p, *v);
}

void Validation::choose_median() {
  std::vector<std::size_t> order(runs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return runs[a].figures.step_ns < runs[b].figures.step_ns;
  });
  const MeasuredValidation& median = runs.at(order.at((order.size() - 1) / 2));
  out_dir = median.out_dir;
  measured = median.figures;
}

void write_projection_json(std::ostream& os, const MeasuredRun& run, const ProjectionBasis& b,
                           const Projection& p, const Validation* v) {
  nlohmann::ordered_json j;
  j["schema"] = kProjectionSchema;
  j["version"] = 1;
  j["units"] = {{"time", "ns per step"},
                {"overlap", "fraction in [0, 1]"},
                {"busbw_gbps", "bus bytes (S x busbw factor) per ns = GB/s"}};
  j["basis"] = basis_json(run, b);
  j["projection"] = projection_json(p);
  if (v != nullptr) {
    const double step = static_cast<double>(p.outcome.step_ns);
    j["validation"] = {
        {"out_dir", v->out_dir},
        {"steps", v->steps},
        {"warmup_steps", v->warmup_steps},
        {"measured",
         {{"step_time_ns", v->measured.step_ns},
          {"exposed_comm_ns", v->measured.exposed_comm_ns},
          {"comm_busy_ns", v->measured.comm_ns},
          {"overlap", json_or_null(v->measured.overlap)}}},
        {"error_pct",
         {{"step_time", json_or_null(error_pct(step, v->measured.step_ns))},
          {"exposed_comm",
           json_or_null(error_pct(p.outcome.exposed_comm_ns, v->measured.exposed_comm_ns))}}},
        {"overlap_error_pp",
         p.outcome.overlap && v->measured.overlap
             ? nlohmann::ordered_json(100.0 * (*p.outcome.overlap - *v->measured.overlap))
             : nlohmann::ordered_json(nullptr)},
        {"library_estimate", estimates_json(p, *v)}};
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (const MeasuredValidation& r : v->runs) {
      runs.push_back({{"out_dir", r.out_dir},
                      {"step_time_ns", r.figures.step_ns},
                      {"exposed_comm_ns", r.figures.exposed_comm_ns},
                      {"step_error_pct", json_or_null(error_pct(step, r.figures.step_ns))}});
    }
    j["validation"]["runs"] = runs;
  }
  os << j.dump(1) << '\n';
}

void write_sweep_text(std::ostream& os, const MeasuredRun& run, const ProjectionBasis& b, int gpus,
                      const std::vector<Projection>& ranked,
                      const std::vector<std::string>& refused) {
  os << "# commprof project --sweep " << gpus << ": every tp x pp x cp x dp layout of " << gpus
     << " ranks, fastest predicted step first\n";
  basis_lines(os, run, b, ranked.empty() ? nullptr : &ranked.front());
  std::vector<std::vector<std::string>> rows = {
      {"rank", "layout", "step(ms)", "exposed comm(ms)", "overlap(%)", "nodes"}};
  int i = 0;
  for (const Projection& p : ranked) {
    rows.push_back({std::to_string(++i), layout_text(p.layout),
                    ms(static_cast<double>(p.outcome.step_ns)), ms(p.outcome.exposed_comm_ns),
                    pct(p.outcome.overlap), std::to_string(p.nodes)});
  }
  write_table(os, rows);
  for (const std::string& r : refused) os << "# refused: " << r << '\n';
  sources_text(os, run, b, ranked.empty() ? nullptr : &ranked.front().slowdown_figures);
}

void write_sweep_json(std::ostream& os, const MeasuredRun& run, const ProjectionBasis& b, int gpus,
                      const std::vector<Projection>& ranked,
                      const std::vector<std::string>& refused) {
  nlohmann::ordered_json j;
  j["schema"] = kProjectionSchema;
  j["version"] = 1;
  j["units"] = {{"time", "ns per step"},
                {"overlap", "fraction in [0, 1]"},
                {"busbw_gbps", "bus bytes (S x busbw factor) per ns = GB/s"}};
  j["basis"] = basis_json(run, b);
  j["sweep_gpus"] = gpus;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Projection& p : ranked) list.push_back(projection_json(p));
  j["ranked"] = list;
  j["refused"] = refused;
  os << j.dump(1) << '\n';
}

}  // namespace commprof
