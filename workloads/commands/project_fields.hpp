// SPDX-License-Identifier: MIT
// What `commprof project` prints, one field table per section (src/fields/field_table.hpp):
// each field's JSON key, text label (with its unit) and value are named once, and the text and
// JSON writers (project_report.cpp) walk the same table (src/fields/field_formats.hpp). Times
// are in ns in JSON and in ms in text; a ratio is a fraction in JSON and a % in text.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "src/fields/field_formats.hpp"
#include "workloads/commands/project_report.hpp"

namespace commprof::project_fields {

using fields::Field;
using fields::field;
using fields::Table;
using U = ReportUnit;

inline constexpr double kNsPerMs = 1e6;  // ns as ms: shown_as("%.3f", 1, kNsPerMs)
inline constexpr double kPct = 100.0;    // a fraction as %: shown_as("%.1f", kPct)

/// A number as the source-run figures print it: 3 significant digits below 0.01.
std::string figure_value(double v);
/// (predicted − measured) / measured as "+1.2%", or "n/a" where it has no value.
std::string error_text(double predicted, double measured);

// ------------------------------------------------------------------ source runs
/// One run of the source (--layout with several result directories, or the one run read).
struct SourceRunRow {
  int run = 0;  ///< 1, 2, … in the order given
  std::string input;
  std::int64_t steps = 0;
  double step_ns = 0.0;
};
inline constexpr Field<SourceRunRow> kSourceRunFields[] = {
    field<&SourceRunRow::run>("run", U::kId, "run", "The run's place among the inputs.")
        .in_text_only(),
    field<&SourceRunRow::steps>("measured_steps", U::kCount, "steps",
                                "Measured steps with per-op timing."),
    field<&SourceRunRow::step_ns>("measured_step_time_ns", U::kNs, "step(ms)",
                                  "The run's measured step.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&SourceRunRow::input>("input", U::kText, "input", "The directory or file read."),
};
inline constexpr Table<SourceRunRow> kSourceRuns{
    "runs", "source runs", {}, {}, {}, kSourceRunFields, std::size(kSourceRunFields)};

inline std::string median_text(const CombinedFigure& f) { return figure_value(f.median); }
inline std::string min_text(const CombinedFigure& f) { return figure_value(f.min); }
inline std::string max_text(const CombinedFigure& f) { return figure_value(f.max); }
std::string spread_text(const CombinedFigure& f);
inline std::string_view spread_is(const CombinedFigure& f) {
  return f.relative ? "max / min - 1" : "max - min";
}
inline constexpr Field<CombinedFigure> kFigureFields[] = {
    field<&CombinedFigure::name>("figure", U::kText, "figure", "What was combined."),
    field<&CombinedFigure::unit>("unit", U::kText, "unit", "Its unit."),
    field<&CombinedFigure::runs>("runs", U::kCount, "runs", "The runs that measured it."),
    field<&CombinedFigure::median>("median", U::kOfRow, "median", "The median over the runs.")
        .text_by(&median_text),
    field<&CombinedFigure::min>("min", U::kOfRow, "min", "The least run's.").text_by(&min_text),
    field<&CombinedFigure::max>("max", U::kOfRow, "max", "The largest run's.").text_by(&max_text),
    field<&CombinedFigure::spread>("spread", U::kRatio, "spread", "The runs' spread.")
        .text_by(&spread_text),
    field<&spread_is>("spread_is", U::kText, "spread is", "How the spread is taken.")
        .in_json_only(),
};
inline constexpr Table<CombinedFigure> kFigures{"figures",     "combined figures",      {}, {}, {},
                                                kFigureFields, std::size(kFigureFields)};

// ------------------------------------------------------------------ the prediction
inline double exposed_comm_ns(const Projection& p) { return p.outcome.exposed_comm_ns; }
inline double comm_busy_ns(const Projection& p) { return p.outcome.comm_ns; }
inline const std::optional<double>& outcome_overlap(const Projection& p) {
  return p.outcome.overlap;
}
inline std::int64_t outcome_step_ns(const Projection& p) { return p.outcome.step_ns; }
inline std::int64_t critical_path_ns(const Projection& p) { return p.path_ns; }
/// The predicted figures, a row each in text (figure, predicted).
inline constexpr Field<Projection> kPredictedFields[] = {
    field<&outcome_step_ns>("step_time_ns", U::kNs, "step (ms)", "The predicted step.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&exposed_comm_ns>("exposed_comm_ns", U::kNs, "exposed comm (ms)",
                            "Communication no compute hid, mean over ranks.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&comm_busy_ns>("comm_busy_ns", U::kNs, "COMM busy (ms)",
                         "Time with communication, mean over ranks.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&outcome_overlap>("overlap", U::kRatio, "overlap (%)",
                            "|COMM ∩ COMP| / |COMM|, mean over ranks.")
        .shown_as("%.1f", kPct),
    field<&critical_path_ns>("critical_path_ns", U::kNs, "critical path (ms)",
                             "The step graph's critical path.")
        .shown_as("%.3f", 1, kNsPerMs),
};
inline constexpr Table<Projection> kPredicted{
    "predicted", "predicted", {}, {}, {}, kPredictedFields, std::size(kPredictedFields)};

inline std::string_view link_of(const ProjectedComm& c) {
  return c.inter_node ? "inter_node" : "intra_node";
}
inline constexpr Field<ProjectedComm> kCommFields[] = {
    field<&ProjectedComm::group>("group", U::kText, "group", "The communicator kind."),
    field<&ProjectedComm::collectives>("collectives", U::kText, "collectives",
                                       "Its collectives' names."),
    field<&ProjectedComm::calls>("calls", U::kCount, "calls", "Instances in the step."),
    field<&ProjectedComm::time_ns>("time_ns", U::kNs, "time(ms)",
                                   "Σ of their times from the last arrival.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&ProjectedComm::bus_bytes>("bus_bytes", U::kBytes, "bus bytes", "Σ S x busbw factor.")
        .in_json_only(),
    field<&ProjectedComm::busbw_gbps>("busbw_gbps", U::kGBps, "busbw(GB/s)",
                                      "Bus bytes over their time.")
        .shown_as("%.3f"),
    field<&link_of>("link", U::kText, "link", "Within a node or across nodes."),
};
inline constexpr Table<ProjectedComm> kComms{"communicators", "predicted collectives", {}, {}, {},
                                             kCommFields,     std::size(kCommFields)};

// ------------------------------------------------------------------ the overlap slowdown
/// One measured factor as the slowdown's table shows it: a COMP kind pooled over its classes,
/// a COMP class, or a COMM key.
struct SlowdownRow {
  enum class Kind { kPooled, kClass, kComm };
  Kind kind = Kind::kClass;
  std::string ops;  ///< its name in text
  const SlowdownFactor* factor = nullptr;
  std::string applied;  ///< which factor the replay applies
  const CommKey* key = nullptr;
};
std::string alone_ops_text(const SlowdownRow& r);
std::string slowdown_text(const SlowdownRow& r);
inline std::int64_t alone_ops(const SlowdownRow& r) { return r.factor->alone_ops; }
inline std::int64_t overlapped_ops(const SlowdownRow& r) { return r.factor->overlapped_ops; }
inline double mean_overlap(const SlowdownRow& r) { return r.factor->mean_overlap; }
inline double alone(const SlowdownRow& r) { return r.factor->alone; }
inline double slowdown(const SlowdownRow& r) { return r.factor->slowdown; }
inline bool slowdown_measured(const SlowdownRow& r) { return r.factor->measured_slowdown; }
inline constexpr Field<SlowdownRow> kSlowdownFields[] = {
    field<&SlowdownRow::ops>("ops", U::kText, "ops", "The ops the factor is of.").in_text_only(),
    field<&alone_ops>("alone_ops", U::kCount, "alone ops", "Its ops under the alone overlap.")
        .text_by(&alone_ops_text),
    field<&overlapped_ops>("overlapped_ops", U::kCount, "overlapped ops",
                           "Its ops over the alone overlap."),
    field<&mean_overlap>("mean_overlap", U::kRatio, "mean overlap(%)",
                         "The overlapped ops' mean overlap.")
        .shown_as("%.1f", kPct),
    field<&alone>("alone", U::kFactor, "alone x", "Time alone over the reference.")
        .shown_as("%.3f"),
    field<&slowdown>("slowdown", U::kRatio, "slowdown", "Extra time per unit of overlap.")
        .text_by(&slowdown_text),
    field<&slowdown_measured>("slowdown_measured", U::kFlag, "measured", "Measured, not borrowed.")
        .in_json_only(),
    field<&SlowdownRow::applied>("applied", U::kText, "applied",
                                 "Which factor the replay applies."),
};
inline constexpr Table<SlowdownRow> kSlowdown{
    "overlap_slowdown", "overlap slowdown",        {}, {}, {},
    kSlowdownFields,    std::size(kSlowdownFields)};

/// COMP's or COMM's ops in the target's replay, with and without the slowdown.
struct AppliedRow {
  std::string_view name;  ///< "COMP", "COMM"
  const AppliedSlowdown* applied = nullptr;
};
inline std::int64_t applied_ops(const AppliedRow& r) { return r.applied->ops; }
inline std::int64_t applied_overlapped(const AppliedRow& r) { return r.applied->overlapped; }
inline double applied_mean_overlap(const AppliedRow& r) { return r.applied->mean_overlap; }
inline double applied_alone_ns(const AppliedRow& r) { return r.applied->base_ns; }
inline double applied_ns(const AppliedRow& r) { return r.applied->applied_ns; }
inline constexpr Field<AppliedRow> kAppliedFields[] = {
    field<&AppliedRow::name>("kind", U::kText, "target ops", "COMP or COMM.").in_text_only(),
    field<&applied_ops>("ops", U::kCount, "ops", "Ops with a factor."),
    field<&applied_overlapped>("overlapped", U::kCount, "overlapped",
                               "Of them, overlapped in the target."),
    field<&applied_mean_overlap>("mean_overlap", U::kRatio, "mean overlap(%)",
                                 "Over the overlapped.")
        .shown_as("%.1f", kPct),
    field<&applied_alone_ns>("alone_ns", U::kNs, "alone(ms)", "Σ their times alone.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&applied_ns>("applied_ns", U::kNs, "applied(ms)", "Σ with the slowdown.")
        .shown_as("%.3f", 1, kNsPerMs),
};
inline constexpr Table<AppliedRow> kApplied{"applied",      "applied slowdown",       {}, {}, {},
                                            kAppliedFields, std::size(kAppliedFields)};

// ------------------------------------------------------------------ the library's estimate
/// A communicator kind's collectives in the validation step, with the projection's time.
struct EstimateLine {
  const EstimateRow* row = nullptr;
  double projected_ns = 0.0;
  std::string projected_error, library_error;  ///< against measured, as text
};
inline std::string_view estimate_group(const EstimateLine& l) { return l.row->group; }
inline std::int64_t estimate_calls(const EstimateLine& l) { return l.row->calls; }
inline std::int64_t estimated_calls(const EstimateLine& l) { return l.row->estimated; }
inline std::optional<double> estimate_ns(const EstimateLine& l) {
  return l.row->estimated > 0 ? std::optional<double>(l.row->estimate_ns) : std::nullopt;
}
inline double estimate_measured_ns(const EstimateLine& l) { return l.row->measured_ns; }
inline constexpr Field<EstimateLine> kEstimateFields[] = {
    field<&estimate_group>("group", U::kText, "group", "The communicator kind."),
    field<&estimate_calls>("calls", U::kCount, "calls", "Instances in the step."),
    field<&estimated_calls>("estimated_calls", U::kCount, "estimated",
                            "Of them, those the library estimated."),
    field<&EstimateLine::projected_ns>("projected_ns", U::kNs, "projected(ms)",
                                       "The projection's time.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&estimate_ns>("estimate_ns", U::kNs, "library(ms)", "Σ of the library's estimates.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&estimate_measured_ns>("measured_ns", U::kNs, "measured(ms)",
                                 "Σ of their measured times.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&EstimateLine::projected_error>("projected_error", U::kText, "projected err",
                                          "The projection against measured.")
        .in_text_only(),
    field<&EstimateLine::library_error>(
        "library_error", U::kText, "library err",
        "The library against measured, where it estimated every call.")
        .in_text_only(),
};
inline constexpr Table<EstimateLine> kEstimates{
    "groups", "library estimate", {}, {}, {}, kEstimateFields, std::size(kEstimateFields)};

// ------------------------------------------------------------------ the sweep
/// One layout of `project --sweep`, in the ranking (fastest predicted step first). Its JSON is
/// the whole projection (projection_json), which carries each of these fields under the same
/// key, at its top or in "predicted".
struct SweepRow {
  int rank = 0;  ///< 1, 2, … fastest first
  std::string layout;
  const Projection* p = nullptr;
};
inline std::int64_t sweep_step_ns(const SweepRow& r) { return r.p->outcome.step_ns; }
inline double sweep_exposed_comm_ns(const SweepRow& r) { return r.p->outcome.exposed_comm_ns; }
inline const std::optional<double>& sweep_overlap(const SweepRow& r) {
  return r.p->outcome.overlap;
}
inline std::int64_t sweep_nodes(const SweepRow& r) { return r.p->nodes; }
inline constexpr Field<SweepRow> kSweepFields[] = {
    field<&SweepRow::rank>("rank", U::kId, "rank", "Its place, fastest first.").in_text_only(),
    field<&SweepRow::layout>("layout", U::kText, "layout", "tp, pp, cp and dp."),
    field<&sweep_step_ns>("step_time_ns", U::kNs, "step(ms)", "The predicted step.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&sweep_exposed_comm_ns>("exposed_comm_ns", U::kNs, "exposed comm(ms)",
                                  "Communication no compute hid, mean over ranks.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&sweep_overlap>("overlap", U::kRatio, "overlap(%)",
                          "|COMM ∩ COMP| / |COMM|, mean over ranks.")
        .shown_as("%.1f", kPct),
    field<&sweep_nodes>("nodes", U::kCount, "nodes", "Nodes the layout takes."),
};
inline constexpr Table<SweepRow> kSweep{
    "ranked", "sweep", {}, {}, {}, kSweepFields, std::size(kSweepFields)};

// ------------------------------------------------------------------ the validation
/// What the validation run measured, compared figure by figure with the prediction's field of
/// the same key (kPredicted): text a row per compared figure (predicted, measured, error), JSON
/// the measured figures, then each compared figure's error (figure_error). COMM busy is
/// measured, not compared.
inline const std::optional<double>& measured_overlap(const WhatIfFigures& f) { return f.overlap; }
inline constexpr Field<WhatIfFigures> kMeasuredFields[] = {
    field<&WhatIfFigures::step_ns>("step_time_ns", U::kNs, "step (ms)", "The measured step.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&WhatIfFigures::exposed_comm_ns>("exposed_comm_ns", U::kNs, "exposed comm (ms)",
                                           "Communication no compute hid, mean over ranks.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&WhatIfFigures::comm_ns>("comm_busy_ns", U::kNs, "COMM busy (ms)",
                                   "Time with communication, mean over ranks.")
        .in_json_only(),
    field<&measured_overlap>("overlap", U::kRatio, "overlap (%)",
                             "|COMM ∩ COMP| / |COMM|, mean over ranks.")
        .shown_as("%.1f", kPct),
};
inline constexpr Table<WhatIfFigures> kMeasured{
    "measured", "validation", {}, {}, {}, kMeasuredFields, std::size(kMeasuredFields)};

/// The prediction's error on figure `f` of kMeasured: a time's (predicted − measured) /
/// measured in % (JSON: error_pct.<figure>), a ratio's difference in percentage points (JSON:
/// <key>_error_pp); none where either side, or a time's measured value, is missing.
std::optional<double> figure_error(const Field<WhatIfFigures>& f, const Projection& predicted,
                                   const WhatIfFigures& measured);
/// The error as text: "+1.2%" or "+3.4 pp", or "n/a".
std::string figure_error_text(const Field<WhatIfFigures>& f, const Projection& predicted,
                              const WhatIfFigures& measured);

/// One run of the validation (--validate-runs), against the prediction.
struct ValidationRunRow {
  int run = 0;  ///< 1, 2, … in the order run
  const MeasuredValidation* measured = nullptr;
  double predicted_ns = 0.0;  ///< the predicted step
};
inline const std::string& run_dir(const ValidationRunRow& r) { return r.measured->out_dir; }
inline double run_step_ns(const ValidationRunRow& r) { return r.measured->figures.step_ns; }
inline double run_exposed_comm_ns(const ValidationRunRow& r) {
  return r.measured->figures.exposed_comm_ns;
}
std::optional<double> run_step_error_pct(const ValidationRunRow& r);
std::string run_step_error_text(const ValidationRunRow& r);
// The directory leads the JSON object and ends the text row (the widest column last): one value
// with a field per place.
inline constexpr Field<ValidationRunRow> kValidationRunFields[] = {
    field<&ValidationRunRow::run>("run", U::kId, "run", "The run's place.").in_text_only(),
    field<&run_dir>("out_dir", U::kText, "directory", "The run's rank files.").in_json_only(),
    field<&run_step_ns>("step_time_ns", U::kNs, "step(ms)", "The run's measured step.")
        .shown_as("%.3f", 1, kNsPerMs),
    field<&run_exposed_comm_ns>("exposed_comm_ns", U::kNs, "exposed comm(ms)",
                                "Communication no compute hid, mean over ranks.")
        .in_json_only(),
    field<&run_step_error_pct>("step_error_pct", U::kRatio, "error",
                               "(predicted - measured) / measured step, in %.")
        .text_by(&run_step_error_text),
    field<&run_dir>("rank_files", U::kText, "rank files", "The run's rank files.").in_text_only(),
};
inline constexpr Table<ValidationRunRow> kValidationRuns{
    "runs", "validation runs", {}, {}, {}, kValidationRunFields, std::size(kValidationRunFields)};

}  // namespace commprof::project_fields
