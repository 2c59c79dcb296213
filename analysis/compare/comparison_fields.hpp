// SPDX-License-Identifier: MIT
// What `commprof compare` writes of each metric, as one field table (src/fields/field_table.hpp):
// its JSON key and its text (and HTML) column are named once, and the text, JSON and HTML
// writers (comparison_writers.cpp) walk the table. A field JSON alone carries (the spreads, the
// notes) is marked in_json_only, the verdict in words in_text_only.
#pragma once

#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "analysis/compare/run_comparison.hpp"
#include "src/fields/field_formats.hpp"

namespace commprof::comparison_fields {

using fields::Field;
using fields::field;
using U = ReportUnit;

/// One metric of both runs as the formats see it.
struct ComparisonRow {
  const MetricComparison* m = nullptr;
  std::string metric;   ///< its key: family[label]
  std::string verdict;  ///< better or worse, against the noise, and the thresholds it crossed
};

/// "ns", "ratio", "GB/s".
std::string_view metric_unit_name(MetricUnit u);
// The text of a value, of a change and of the noise in the metric's unit (92.80 ms, +41.2 pp).
std::string base_text(const ComparisonRow& r);
std::string new_text(const ComparisonRow& r);
std::string delta_text(const ComparisonRow& r);
std::string relative_text(const ComparisonRow& r);
std::string noise_text(const ComparisonRow& r);

inline bool both(const ComparisonRow& r) { return r.m->in_base && r.m->in_new; }
inline const std::string& family(const ComparisonRow& r) { return r.m->base_metric.family; }
inline const std::string& label(const ComparisonRow& r) { return r.m->base_metric.label; }
inline std::string_view unit(const ComparisonRow& r) {
  return metric_unit_name(r.m->base_metric.unit);
}
inline bool higher_is_better(const ComparisonRow& r) { return r.m->base_metric.higher_is_better; }
inline std::optional<double> base_value(const ComparisonRow& r) {
  return r.m->in_base ? std::optional<double>(r.m->base_metric.value) : std::nullopt;
}
inline std::optional<double> new_value(const ComparisonRow& r) {
  return r.m->in_new ? std::optional<double>(r.m->new_metric.value) : std::nullopt;
}
inline std::optional<double> base_spread(const ComparisonRow& r) {
  return r.m->in_base ? r.m->base_metric.spread : std::nullopt;
}
inline std::optional<double> new_spread(const ComparisonRow& r) {
  return r.m->in_new ? r.m->new_metric.spread : std::nullopt;
}
inline std::optional<double> delta(const ComparisonRow& r) {
  return both(r) ? std::optional<double>(r.m->delta) : std::nullopt;
}
inline std::optional<double> relative(const ComparisonRow& r) {
  return both(r) ? r.m->relative : std::nullopt;
}
inline const std::optional<double>& noise(const ComparisonRow& r) { return r.m->noise; }
inline bool beyond_noise(const ComparisonRow& r) { return r.m->beyond_noise(); }
inline bool no_noise(const ComparisonRow& r) { return !r.m->noise; }
inline bool worse(const ComparisonRow& r) { return r.m->delta != 0 && r.m->worse(); }
inline bool not_both(const ComparisonRow& r) { return !both(r); }
const std::string& base_note(const ComparisonRow& r);
const std::string& new_note(const ComparisonRow& r);

inline constexpr Field<ComparisonRow> kFields[] = {
    field<&ComparisonRow::metric>("metric", U::kText, "metric", "family[label]."),
    field<&family>("family", U::kText, "family", "What thresholds name.").in_json_only(),
    field<&label>("label", U::kText, "label", "The metric within its family.").in_json_only(),
    field<&unit>("unit", U::kText, "unit", "The unit of its values.").in_json_only(),
    field<&higher_is_better>("higher_is_better", U::kFlag, "higher is better",
                             "Whether a rise is better.")
        .in_json_only(),
    field<&base_value>("base", U::kOfRow, "base", "The base run's value.").text_by(&base_text),
    field<&new_value>("new", U::kOfRow, "new", "The new run's value.").text_by(&new_text),
    field<&base_spread>("base_spread", U::kOfRow, "base spread",
                        "The base run's step-to-step standard deviation.")
        .in_json_only(),
    field<&new_spread>("new_spread", U::kOfRow, "new spread",
                       "The new run's step-to-step standard deviation.")
        .in_json_only(),
    field<&delta>("delta", U::kOfRow, "change", "new - base.").text_by(&delta_text),
    field<&relative>("relative", U::kRatio, "change %", "(new - base) / base.")
        .text_by(&relative_text),
    field<&noise>("noise", U::kOfRow, "noise",
                  "Two standard errors (2 SE) of the difference: step-to-step noise.")
        .text_by(&noise_text),
    field<&beyond_noise>("beyond_noise", U::kFlag, "beyond noise",
                         "Whether the change is beyond the noise.")
        .na_if(&no_noise)
        .in_json_only(),
    field<&worse>("worse", U::kFlag, "worse", "Whether the change is for the worse.")
        .na_if(&not_both)
        .in_json_only(),
    field<&base_note>("base_note", U::kText, "base note", "What the base run says of it.")
        .in_json_only(),
    field<&new_note>("new_note", U::kText, "new note", "What the new run says of it.")
        .in_json_only(),
    field<&ComparisonRow::verdict>("verdict", U::kText, "verdict",
                                   "Better or worse, against the noise; thresholds crossed.")
        .in_text_only(),
};
inline constexpr fields::Table<ComparisonRow> kComparison{"metrics", "comparison",      {}, {}, {},
                                                          kFields,   std::size(kFields)};

}  // namespace commprof::comparison_fields
