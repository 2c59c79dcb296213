// SPDX-License-Identifier: MIT
#include "workloads/commands/project_report.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "analysis/report/text_table.hpp"
#include "src/core/log.hpp"
#include "workloads/commands/project_fields.hpp"
#include "workloads/layout.hpp"

namespace commprof {
namespace {

constexpr const char* kProjectionSchema = "commprof.projection";

std::string ms(double ns) { return format_number("%.3f", ns / 1e6); }

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

// The source runs as rows: each run combined, or the one run read.
std::vector<project_fields::SourceRunRow> source_rows(const MeasuredRun& run,
                                                      const ProjectionBasis& b) {
  std::vector<project_fields::SourceRunRow> rows;
  if (run.sources.size() < 2) {
    rows.push_back({1, b.inputs.empty() ? std::string() : b.inputs.front(), run.rates.steps,
                    run.figures.measured.step_ns});
  }
  for (std::size_t k = 0; run.sources.size() > 1 && k < run.sources.size(); ++k) {
    const MeasuredRun& s = run.sources[k];
    rows.push_back({static_cast<int>(k + 1), k < b.inputs.size() ? b.inputs[k] : s.files.front(),
                    s.rates.steps, s.figures.measured.step_ns});
  }
  return rows;
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
  write_table(os, fields::text_rows(project_fields::kSourceRuns, source_rows(run, b)));
  std::vector<CombinedFigure> figures = run.combined;
  if (slowdown != nullptr) figures.insert(figures.end(), slowdown->begin(), slowdown->end());
  write_table(os, fields::text_rows(project_fields::kFigures, figures));
}

nlohmann::ordered_json figures_json(const std::vector<CombinedFigure>& figures) {
  return fields::json_array(project_fields::kFigures, figures);
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

using project_fields::SlowdownRow;

// Every measured factor: COMP's pooled per kind, COMP's per class, COMM's per key.
std::vector<SlowdownRow> slowdown_rows(const OverlapSlowdown& s) {
  std::vector<SlowdownRow> rows;
  for (const auto& [kind, f] : s.comp_pooled) {
    rows.push_back({SlowdownRow::Kind::kPooled, "COMP, every " + kind + " class (pooled)", &f,
                    "below " + std::to_string(kMinClassOps) + " ops"});
  }
  for (const auto& [cls, f] : s.comp) {
    rows.push_back({SlowdownRow::Kind::kClass, "COMP " + cls, &f,
                    &s.comp_factor(cls) == &f ? "own" : "pooled"});
  }
  for (const auto& [k, f] : s.comm) {
    rows.push_back({SlowdownRow::Kind::kComm,
                    log::cat("COMM ", link_collective_name(k.collective), " ", k.group, " ",
                             size_class_name(k.size_class), k.inter_node ? " inter_node" : ""),
                    &f, f.measured_slowdown ? "own" : "slowdown from its kind", &k});
  }
  return rows;
}

std::vector<project_fields::AppliedRow> applied_rows(const Projection& p) {
  return {{"COMP", &p.applied_comp}, {"COMM", &p.applied_comm}};
}

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
  std::vector<std::vector<std::string>> rows = {fields::text_labels(project_fields::kSlowdown)};
  for (const SlowdownRow& r : slowdown_rows(s)) {
    // A class without overlapped ops has no factor of its own to show.
    if (r.kind == SlowdownRow::Kind::kClass && r.factor->overlapped_ops == 0) continue;
    rows.push_back(fields::text_cells(project_fields::kSlowdown, r));
  }
  write_table(os, rows);
  if (s.comm_without_fit > 0) {
    os << "# " << s.comm_without_fit << " COMM op(s) no link fit covers were left out\n";
  }
  os << "# applied in the target's replay (" << p.iterations << " replay(s)"
     << (p.converged ? ", settled" : ", not settled") << "): step with every op alone "
     << ms(static_cast<double>(p.step_alone_ns)) << " ms, with the slowdown "
     << ms(static_cast<double>(p.outcome.step_ns)) << " ms\n";
  write_table(os, fields::text_rows(project_fields::kApplied, applied_rows(p)));
}

nlohmann::ordered_json slowdown_json(const Projection& p) {
  nlohmann::ordered_json j;
  j["applied"] = p.slowdown_applied;
  if (!p.slowdown_applied) return j;
  const OverlapSlowdown& s = p.slowdown;
  j["alone_below_overlap"] = kAloneOverlap;
  j["comp_min_class_ops"] = kMinClassOps;
  // COMP's factors keyed by kind (pooled) and class, COMM's a list naming their keys.
  nlohmann::ordered_json pooled = nlohmann::ordered_json::object();
  nlohmann::ordered_json comp = nlohmann::ordered_json::object();
  nlohmann::ordered_json comm = nlohmann::ordered_json::array();
  auto pooled_it = s.comp_pooled.begin();
  auto comp_it = s.comp.begin();
  for (const SlowdownRow& r : slowdown_rows(s)) {
    const nlohmann::ordered_json e = fields::json_object(project_fields::kSlowdown, r);
    if (r.kind == SlowdownRow::Kind::kPooled) {
      pooled[(pooled_it++)->first] = e;
    } else if (r.kind == SlowdownRow::Kind::kClass) {
      comp[(comp_it++)->first] = e;
    } else {
      nlohmann::ordered_json named = {{"collective", link_collective_name(r.key->collective)},
                                      {"group", r.key->group},
                                      {"size_class", size_class_name(r.key->size_class)},
                                      {"link", r.key->inter_node ? "inter_node" : "intra_node"}};
      named.update(e);
      comm.push_back(named);
    }
  }
  j["comp_pooled"] = pooled;
  j["comp"] = comp;
  j["comm"] = comm;
  j["comm_without_fit"] = s.comm_without_fit;
  j["source_runs_figures"] = figures_json(p.slowdown_figures);
  j["replays"] = p.iterations;
  j["settled"] = p.converged;
  j["step_time_alone_ns"] = p.step_alone_ns;
  for (const project_fields::AppliedRow& a : applied_rows(p)) {
    j[a.name == "COMP" ? "applied_comp" : "applied_comm"] =
        fields::json_object(project_fields::kApplied, a);
  }
  return j;
}

nlohmann::ordered_json json_or_null(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json projection_json(const Projection& p) {
  nlohmann::ordered_json j;
  j["layout"] = layout_text(p.layout);
  j["ranks"] = p.ranks;
  j["nodes"] = p.nodes;
  j["ops"] = p.ops;
  j["predicted"] = fields::json_object(project_fields::kPredicted, p);
  j["communicators"] = fields::json_array(project_fields::kComms, p.comms);
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
  return {{"runs", fields::json_array(project_fields::kSourceRuns, source_rows(run, b))},
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

using project_fields::error_text;

// The projection's time of a communicator kind's collectives in the step (0: none there).
double projected_ns(const Projection& p, const std::string& group) {
  for (const ProjectedComm& c : p.comms) {
    if (c.group == group) return c.time_ns;
  }
  return 0.0;
}

// The library's estimate per communicator kind, beside the projection's time and both errors.
std::vector<project_fields::EstimateLine> estimate_lines(const Projection& p, const Validation& v) {
  std::vector<project_fields::EstimateLine> lines;
  for (const EstimateRow& r : v.estimates) {
    const double proj = projected_ns(p, r.group);
    lines.push_back({&r, proj, proj > 0 ? error_text(proj, r.measured_ns) : "n/a",
                     r.estimated == r.calls ? error_text(r.estimate_ns, r.measured_ns) : "n/a"});
  }
  return lines;
}

// Each validation run against the prediction.
std::vector<project_fields::ValidationRunRow> validation_run_rows(double predicted,
                                                                  const Validation& v) {
  std::vector<project_fields::ValidationRunRow> rows;
  for (const MeasuredValidation& r : v.runs) {
    rows.push_back({static_cast<int>(rows.size()) + 1, &r, predicted});
  }
  return rows;
}

// Every validation run's step and the prediction's error against it, and the runs' spread: an
// error inside the spread is the machine's as much as the projection's.
void runs_text(std::ostream& os, double predicted, const Validation& v) {
  double lo = 0.0, hi = 0.0;
  bool first = true;
  os << "\n## Validation runs (the table above compares with the run of median step)\n";
  for (const MeasuredValidation& r : v.runs) {
    const double step = r.figures.step_ns;
    lo = first ? step : std::min(lo, step);
    hi = first ? step : std::max(hi, step);
    first = false;
  }
  write_table(
      os, fields::text_rows(project_fields::kValidationRuns, validation_run_rows(predicted, v)));
  const std::optional<double> spread = error_pct(hi, lo);
  os << "# the runs' own spread: slowest step " << (spread ? format_number("%.1f", *spread) : "n/a")
     << "% above the fastest; the prediction "
     << (predicted >= lo && predicted <= hi ? "lies within" : "lies outside")
     << " the measured range\n";
}

// The prediction against the validation run, a row per compared figure (kMeasured).
std::vector<std::vector<std::string>> compared_rows(const Projection& p, const Validation& v) {
  std::vector<std::vector<std::string>> rows = {{"figure", "predicted", "measured", "error"}};
  for (const auto& f : project_fields::kMeasured) {
    if (!fields::in_text(f)) continue;
    rows.push_back({std::string(f.label),
                    fields::text_cell(fields::field_named(project_fields::kPredicted, f.key), p),
                    fields::text_cell(f, v.measured),
                    project_fields::figure_error_text(f, p, v.measured)});
  }
  return rows;
}

// The validation as JSON: the measured figures, each compared figure's error, the library's
// estimate and every run.
nlohmann::ordered_json validation_json(const Projection& p, const Validation& v);

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
  write_table(os, fields::text_rows(project_fields::kEstimates, estimate_lines(p, v)));
}

nlohmann::ordered_json estimates_json(const Projection& p, const Validation& v) {
  nlohmann::ordered_json j;
  j["model"] = v.estimate_model.empty() ? nlohmann::ordered_json(nullptr)
                                        : nlohmann::ordered_json(v.estimate_model);
  if (v.estimate_model.empty()) j["none_because"] = v.no_estimate_why;
  j["groups"] = fields::json_array(project_fields::kEstimates, estimate_lines(p, v));
  return j;
}

}  // namespace

void write_projection_text(std::ostream& os, const MeasuredRun& run, const ProjectionBasis& b,
                           const Projection& p, const Validation* v) {
  os << "# commprof project: " << layout_text(p.layout) << " (" << describe(p.layout) << ", "
     << p.ranks << " ranks on " << p.nodes << " node(s)), one step replayed: " << p.ops << " ops\n";
  basis_lines(os, run, b, &p);
  for (const std::string& n : p.notes) os << "# borrowed: " << n << '\n';
  std::vector<std::vector<std::string>> rows =
      fields::text_column(project_fields::kPredicted, p, {"figure", "predicted"});
  if (p.jitter_draws > 0) {
    rows.push_back({"one step, 10th pct (ms)", ms(static_cast<double>(p.step_p10_ns))});
    rows.push_back({"one step, 90th pct (ms)", ms(static_cast<double>(p.step_p90_ns))});
  }
  write_table(os, rows);
  if (!p.comms.empty()) {
    os << "\n## Predicted collectives per communicator kind (one step)\n";
    write_table(os, fields::text_rows(project_fields::kComms, p.comms));
  }
  sources_text(os, run, b, &p.slowdown_figures);
  slowdown_text(os, p);
  if (v == nullptr) return;
  os << "\n## Validation: `commprof run` at " << layout_text(p.layout) << ", " << v->steps
     << " measured steps after " << v->warmup_steps << " warm-up, rank files in " << v->out_dir
     << "\n# error = (predicted - measured) / measured; overlap's in percentage points\n";
  const double step = static_cast<double>(p.outcome.step_ns);
  write_table(os, compared_rows(p, *v));
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
  if (v != nullptr) j["validation"] = validation_json(p, *v);
  os << j.dump(1) << '\n';
}

void write_sweep_text(std::ostream& os, const MeasuredRun& run, const ProjectionBasis& b, int gpus,
                      const std::vector<Projection>& ranked,
                      const std::vector<std::string>& refused) {
  os << "# commprof project --sweep " << gpus << ": every tp x pp x cp x dp layout of " << gpus
     << " ranks, fastest predicted step first\n";
  basis_lines(os, run, b, ranked.empty() ? nullptr : &ranked.front());
  std::vector<project_fields::SweepRow> rows;
  for (const Projection& p : ranked) {
    rows.push_back({static_cast<int>(rows.size()) + 1, layout_text(p.layout), &p});
  }
  write_table(os, fields::text_rows(project_fields::kSweep, rows));
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

namespace {

nlohmann::ordered_json validation_json(const Projection& p, const Validation& v) {
  nlohmann::ordered_json errors = nlohmann::ordered_json::object(), j;
  j["out_dir"] = v.out_dir;
  j["steps"] = v.steps;
  j["warmup_steps"] = v.warmup_steps;
  j["measured"] = fields::json_object(project_fields::kMeasured, v.measured);
  // A time's error in % under error_pct; a ratio's in points beside it (overlap_error_pp).
  std::vector<std::pair<std::string, nlohmann::ordered_json>> points;
  for (const auto& f : project_fields::kMeasured) {
    if (!fields::in_text(f)) continue;  // measured, not compared
    const nlohmann::ordered_json e = json_or_null(project_fields::figure_error(f, p, v.measured));
    if (f.unit == ReportUnit::kRatio) {
      points.emplace_back(std::string(f.key) + "_error_pp", e);
    } else {
      errors[std::string(fields::metric_of_key(f.key))] = e;
    }
  }
  j["error_pct"] = errors;
  for (const auto& [key, e] : points) j[key] = e;
  j["library_estimate"] = estimates_json(p, v);
  j["runs"] = fields::json_array(project_fields::kValidationRuns,
                                 validation_run_rows(static_cast<double>(p.outcome.step_ns), v));
  return j;
}

}  // namespace

namespace project_fields {

std::optional<double> figure_error(const Field<WhatIfFigures>& f, const Projection& predicted,
                                   const WhatIfFigures& measured) {
  const std::optional<fields::Value> a =
      fields::defined_value(fields::field_named(kPredicted, f.key), predicted);
  const std::optional<fields::Value> m = fields::defined_value(f, measured);
  if (!a || !m) return std::nullopt;
  if (f.unit == ReportUnit::kRatio) return 100.0 * (fields::as_number(*a) - fields::as_number(*m));
  return error_pct(fields::as_number(*a), fields::as_number(*m));
}

std::string figure_error_text(const Field<WhatIfFigures>& f, const Projection& predicted,
                              const WhatIfFigures& measured) {
  const std::optional<double> e = figure_error(f, predicted, measured);
  if (!e) return "n/a";
  return format_number("%+.1f", *e) + (f.unit == ReportUnit::kRatio ? " pp" : "%");
}

std::optional<double> run_step_error_pct(const ValidationRunRow& r) {
  return error_pct(r.predicted_ns, r.measured->figures.step_ns);
}

std::string run_step_error_text(const ValidationRunRow& r) {
  return error_text(r.predicted_ns, r.measured->figures.step_ns);
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

std::string error_text(double predicted, double measured) {
  const std::optional<double> e = error_pct(predicted, measured);
  return e ? format_number("%+.1f", *e) + "%" : std::string("n/a");
}

// A pooled factor has no alone ops of its own: its classes' are theirs.
std::string alone_ops_text(const SlowdownRow& r) {
  return r.kind == SlowdownRow::Kind::kPooled ? "-" : std::to_string(r.factor->alone_ops);
}

// COMM always has a slowdown (its own or its kind's); COMP's is n/a where not measured.
std::string slowdown_text(const SlowdownRow& r) {
  const SlowdownFactor& f = *r.factor;
  return r.kind == SlowdownRow::Kind::kComm || f.measured_slowdown
             ? format_number("%+.3f", f.slowdown)
             : std::string("n/a");
}

}  // namespace project_fields

}  // namespace commprof
