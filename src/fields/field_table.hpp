// SPDX-License-Identifier: MIT
// What a field table is made of: a field of a row type (its key, value, unit, n/a rule and what
// the formats need to present it), a table of them, and what the writers ask of a field. Each
// field is declared once and every format walks the table, so no format can miss one. The
// report's tables (analysis/report_fields.hpp) came first; how its formats present a field:
//   JSON        key: value; n/a is null; a Stat is {min, mean, max, stddev, count}
//   CSV         column key; n/a is an empty cell; a Stat is its mean (and, for min_max fields,
//               its min and max in <stem>_min<unit> and <stem>_max<unit> after the fields)
//   text, HTML  column label(unit), the unit converted for display (us, %, GB/s); n/a is "n/a";
//               a Stat is its mean; text may split a row type over parts (tables) to stay narrow,
//               repeating the fields that name the row in each
//   Prometheus  a number is a sample of its metric (base units: seconds, ratio) labelled with
//               the fields that name the row; other text goes into the table's _info metric
//               (value 1); n/a is no sample
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "src/fields/field_unit.hpp"
#include "src/fields/stat.hpp"

namespace commprof::fields {

/// What "not defined" is for a field.
enum class Absent {
  kNever,
  kNegative,   ///< a negative sentinel (busbw of a collective without a bus factor)
  kNoSamples,  ///< a Stat of count 0 (overlap over steps without COMM)
  kNullopt,    ///< an empty optional (a speed-up without a step time to divide by)
  kEmptyText,  ///< "" (NCCL's algorithm where no profiler plugin recorded it)
  kRowSays,    ///< a predicate on the row (the worst host of a metric no rank has)
};

/// A value as the formats see it: none (an empty optional), an integer, a real, text (a view of
/// the row's string), a per-step statistic, a flag or a unit.
using Value = std::variant<std::monostate, std::int64_t, double, std::string_view, const Stat*,
                           bool, ReportUnit>;

/// One field of a row type.
template <class Row>
struct Field {
  std::string_view key;  ///< JSON member, CSV column
  Value (*get)(const Row&) = nullptr;
  ReportUnit unit = ReportUnit::kText;
  std::string_view label;  ///< text and HTML header, before the unit
  std::string_view help;   ///< what it is: Prometheus HELP, the HTML header's title
  Absent absent = Absent::kNever;
  bool (*absent_if)(const Row&) = nullptr;  ///< for Absent::kRowSays
  /// Set: the field names the row. It is this Prometheus label on each of the row's samples,
  /// and each text table of the row type repeats it.
  std::string_view row_label;
  std::string_view metric;        ///< Prometheus metric of a number (per-row unit: + _seconds…)
  std::string_view metric_label;  ///< with metric_value: tells fields of one metric apart
  std::string_view metric_value;
  int part = 0;                 ///< the text table it goes in
  bool joins_previous = false;  ///< text and HTML show it with the field before as a range "a-b"
  bool min_max = false;         ///< CSV adds the Stat's min and max
  /// Per rank: what `commprof compare` and its thresholds call the metric ("step"); such fields
  /// are also summarised across ranks.
  std::string_view family;
  bool higher_is_better = false;
  // For outputs that write their own text (field_formats.hpp), whose labels name their units:
  std::string_view text_format;  ///< a number's printf format in text ("%.3f"); "" as is
  double text_times = 1.0;       ///< text shows value x text_times / text_per (a ratio as %:
  double text_per = 1.0;         ///< x 100; ns as ms: / 1e6)
  std::string (*text)(const Row&) = nullptr;  ///< the text cell where no format says it
  bool text_only = false;                     ///< not in JSON or CSV (a row's ordinal)
  bool json_only = false;                     ///< not in text (a detail the table leaves out)

  constexpr Field na_if_negative() const {
    Field f = *this;
    f.absent = Absent::kNegative;
    return f;
  }
  constexpr Field na_if_empty() const {
    Field f = *this;
    f.absent = Absent::kEmptyText;
    return f;
  }
  constexpr Field na_if(bool (*predicate)(const Row&)) const {
    Field f = *this;
    f.absent = Absent::kRowSays;
    f.absent_if = predicate;
    return f;
  }
  constexpr Field names_row(std::string_view prometheus_label) const {
    Field f = *this;
    f.row_label = prometheus_label;
    return f;
  }
  constexpr Field prom(std::string_view name, std::string_view label_name = {},
                       std::string_view label_value = {}) const {
    Field f = *this;
    f.metric = name;
    f.metric_label = label_name;
    f.metric_value = label_value;
    return f;
  }
  constexpr Field in_part(int p) const {
    Field f = *this;
    f.part = p;
    return f;
  }
  constexpr Field range_end() const {
    Field f = *this;
    f.joins_previous = true;
    return f;
  }
  constexpr Field with_min_max() const {
    Field f = *this;
    f.min_max = true;
    return f;
  }
  constexpr Field compared_as(std::string_view name, bool higher_better = false) const {
    Field f = *this;
    f.family = name;
    f.higher_is_better = higher_better;
    return f;
  }
  constexpr Field shown_as(std::string_view printf_format, double times = 1.0,
                           double per = 1.0) const {
    Field f = *this;
    f.text_format = printf_format;
    f.text_times = times;
    f.text_per = per;
    return f;
  }
  constexpr Field text_by(std::string (*cell)(const Row&)) const {
    Field f = *this;
    f.text = cell;
    return f;
  }
  constexpr Field in_text_only() const {
    Field f = *this;
    f.text_only = true;
    return f;
  }
  constexpr Field in_json_only() const {
    Field f = *this;
    f.json_only = true;
    return f;
  }
};

namespace detail {

// Whether the row carries its own unit (a ReportUnit member `unit`), which kOfRow fields take.
template <class Row, class = void>
struct has_own_unit : std::false_type {};
template <class Row>
struct has_own_unit<Row, std::void_t<decltype(std::declval<const Row&>().unit)>>
    : std::is_same<std::decay_t<decltype(std::declval<const Row&>().unit)>, ReportUnit> {};

template <class M>
struct row_of;
template <class T, class C>
struct row_of<T C::*> {  // a data member, or a const member function
  using type = C;
};
template <class R, class C>
struct row_of<R (*)(const C&)> {
  using type = C;
};

inline Value to_value(int v) { return std::int64_t{v}; }
inline Value to_value(std::int64_t v) { return v; }
inline Value to_value(std::uint64_t v) { return static_cast<std::int64_t>(v); }
inline Value to_value(double v) { return v; }
inline Value to_value(bool v) { return v; }
inline Value to_value(ReportUnit u) { return u; }
inline Value to_value(const std::string& s) { return std::string_view(s); }
// A view an accessor returns must outlive the row (a constant: CollectiveInstance::busbw_basis).
inline Value to_value(std::string_view s) { return s; }
inline Value to_value(const Stat& s) { return &s; }
inline Value to_value(const std::optional<double>& v) { return v ? Value(*v) : Value(); }
// A view of a temporary would dangle: accessors return text and Stats by reference.
Value to_value(std::string&&) = delete;
Value to_value(Stat&&) = delete;

template <auto M>
Value value_of(const typename row_of<decltype(M)>::type& row) {
  return to_value(std::invoke(M, row));
}

}  // namespace detail

/// The field whose value is `M` (a member, a const member function or a function of the row).
/// A Stat is n/a without samples, an optional when empty; anything else until said otherwise.
template <auto M>
constexpr Field<typename detail::row_of<decltype(M)>::type> field(std::string_view key,
                                                                  ReportUnit unit,
                                                                  std::string_view label,
                                                                  std::string_view help) {
  using Row = typename detail::row_of<decltype(M)>::type;
  using V = std::decay_t<std::invoke_result_t<decltype(M), const Row&>>;
  Field<Row> f;
  f.key = key;
  f.get = &detail::value_of<M>;
  f.unit = unit;
  f.label = label;
  f.help = help;
  if constexpr (std::is_same_v<V, Stat>) f.absent = Absent::kNoSamples;
  if constexpr (std::is_same_v<V, std::optional<double>>) f.absent = Absent::kNullopt;
  return f;
}

/// A row type's fields and where the formats put them.
template <class Row>
struct Table {
  std::string_view name;         ///< JSON member, CSV table, the HTML data block's table
  std::string_view title;        ///< text and HTML heading
  std::string_view html_id;      ///< the HTML table's id
  std::string_view info_metric;  ///< Prometheus metric of the row's other text ("": none)
  std::string_view info_help;
  const Field<Row>* fields = nullptr;
  std::size_t size = 0;
  constexpr const Field<Row>* begin() const { return fields; }
  constexpr const Field<Row>* end() const { return fields + size; }
  /// The text tables the row type takes.
  constexpr int parts() const {
    int n = 1;
    for (const Field<Row>& f : *this) n = f.part + 1 > n ? f.part + 1 : n;
    return n;
  }
};

/// What every table must hold, checked as it compiles: a key, label and help per field,
/// keys unique; every number a Prometheus metric (one HELP per metric) unless it names the row,
/// other text a table with an _info metric; ranges after their start; row names in the first
/// text table.
template <class Row>
constexpr bool well_formed(const Table<Row>& t) {
  for (std::size_t i = 0; i < t.size; ++i) {
    const Field<Row>& f = t.fields[i];
    // (Not the accessors: `field` and `na_if` always set them, and GCC's UBSan instruments a
    // function pointer's comparison with null, which then is no constant expression.)
    if (f.key.empty() || f.label.empty() || f.help.empty()) return false;
    const bool text = f.unit == ReportUnit::kText;
    if (f.row_label.empty() && (text ? t.info_metric.empty() : f.metric.empty())) return false;
    if (!f.row_label.empty() && f.part != 0) return false;
    if (f.joins_previous && (i == 0 || t.fields[i - 1].label != f.label)) return false;
    for (std::size_t j = 0; j < i; ++j) {
      const Field<Row>& g = t.fields[j];
      if (g.key == f.key || (!f.metric.empty() && g.metric == f.metric && g.help != f.help)) {
        return false;
      }
    }
  }
  return true;
}

// ------------------------------------------------------------------ reading a field
/// A row, whether a writer holds it or a pointer to it.
template <class Row>
const Row& deref(const Row& row) {
  return row;
}
template <class Row>
const Row& deref(const Row* row) {
  return *row;
}

/// The unit of `f` in `row` (kOfRow resolved).
template <class Row>
ReportUnit unit_of(const Field<Row>& f, const Row& row) {
  if constexpr (detail::has_own_unit<Row>::value) {
    if (f.unit == ReportUnit::kOfRow) return row.unit;
  }
  return f.unit;
}

/// Whether `v`, the value of `f` in `row`, is not defined.
template <class Row>
bool is_absent(const Field<Row>& f, const Row& row, const Value& v) {
  switch (f.absent) {
    case Absent::kNever:
      return false;
    case Absent::kNegative:
      return (std::holds_alternative<std::int64_t>(v) && std::get<std::int64_t>(v) < 0) ||
             (std::holds_alternative<double>(v) && std::get<double>(v) < 0);
    case Absent::kNoSamples:
      return std::get<const Stat*>(v)->count == 0;
    case Absent::kNullopt:
      return std::holds_alternative<std::monostate>(v);
    case Absent::kEmptyText:
      return std::get<std::string_view>(v).empty();
    case Absent::kRowSays:
      return f.absent_if(row);
  }
  return false;
}

/// The value of `f` in `row`, or nothing when it is not defined.
template <class Row>
std::optional<Value> defined_value(const Field<Row>& f, const Row& row) {
  Value v = f.get(row);
  if (is_absent(f, row, v)) return std::nullopt;
  return v;
}

/// A defined number as one double: an integer, a real, a Stat's mean, a flag as 0 or 1.
double as_number(const Value& v);
/// Whether the formats show the value as a number (everything but text and units).
bool is_number(const Value& v);

/// The unit as the report's JSON and CSV name it: "ns", "B", "GB/s", "ratio", ...
const char* unit_name(ReportUnit u);
/// Where a text or HTML header puts the unit: "(us)", "(%)", "(GB/s)", "(B)", "(#)", "(ranks)",
/// "(x)"; "" for identifiers, text and units that vary by row.
const char* text_unit_suffix(ReportUnit u);
/// The field's text header: its label and unit suffix ("step(us)").
template <class Row>
std::string text_header(const Field<Row>& f) {
  return std::string(f.label) + text_unit_suffix(f.unit);
}
/// The CSV columns of a min_max field's min and max: step_time_ns → step_time_min_ns.
std::string min_max_column(std::string_view key, std::string_view which);

/// A column of the text and HTML tables: one field, or a range of two (first-last).
template <class Row>
struct Column {
  const Field<Row>* field;
  const Field<Row>* range_end = nullptr;
};
/// The columns of text table `part` of `table` (the fields that name the row, then the part's
/// own), or with part < 0 of every field (HTML's one table).
template <class Row>
std::vector<Column<Row>> columns(const Table<Row>& table, int part) {
  std::vector<Column<Row>> out;
  for (const Field<Row>& f : table) {
    if (part >= 0 && f.part != part && f.row_label.empty()) continue;
    if (f.joins_previous && !out.empty() && out.back().field + 1 == &f) {
      out.back().range_end = &f;
    } else {
      out.push_back({&f});
    }
  }
  return out;
}

/// The text of column `c` in `row`: format(field, row), or for a range both ends joined ("2-4";
/// one number when they are equal).
template <class Row, class Format>
std::string column_text(const Column<Row>& c, const Row& row, Format&& format) {
  std::string first = format(*c.field, row);
  if (c.range_end == nullptr) return first;
  std::string last = format(*c.range_end, row);
  return first == last ? first : first + "-" + last;
}

/// The Prometheus metric of `f` in `row`: its name, and for a unit that varies by row, the base
/// unit after it (commprof_across_ranks_seconds).
template <class Row>
std::string metric_name(const Field<Row>& f, const Row& row) {
  std::string name(f.metric);
  if (f.unit == ReportUnit::kOfRow)
    name += unit_of(f, row) == ReportUnit::kRatio ? "_ratio" : "_seconds";
  return name;
}

/// The field of `table` keyed `key`. Where the result must be a constant, a key the table does
/// not have fails to compile: readers of the report JSON name its members through this.
template <class Row>
constexpr const Field<Row>& field_named(const Table<Row>& table, std::string_view key) {
  for (const Field<Row>& f : table) {
    if (f.key == key) return f;
  }
  throw std::logic_error("the report has no such field");
}

/// An across-ranks metric's name: the per-rank key without its unit ("step_time_ns" →
/// "step_time").
std::string_view metric_of_key(std::string_view key);

}  // namespace commprof::fields
