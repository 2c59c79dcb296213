// SPDX-License-Identifier: MIT
#include "src/fields/field_table.hpp"

#include <iterator>

namespace commprof::fields {

double as_number(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* s = std::get_if<const Stat*>(&v)) return (*s)->mean;
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1.0 : 0.0;
  return 0.0;
}

bool is_number(const Value& v) {
  return !std::holds_alternative<std::string_view>(v) && !std::holds_alternative<ReportUnit>(v) &&
         !std::holds_alternative<std::monostate>(v);
}

namespace {

// Each unit's name in the JSON and CSV reports and its suffix in a text header.
struct UnitNames {
  ReportUnit unit;
  const char* name;
  const char* text_suffix;
};
constexpr UnitNames kUnitNames[] = {
    {ReportUnit::kNs, "ns", "(us)"},      {ReportUnit::kUs, "us", "(us)"},
    {ReportUnit::kBytes, "B", "(B)"},     {ReportUnit::kGBps, "GB/s", "(GB/s)"},
    {ReportUnit::kRatio, "ratio", "(%)"}, {ReportUnit::kFactor, "factor", "(x)"},
    {ReportUnit::kCount, "count", "(#)"}, {ReportUnit::kRanks, "ranks", "(ranks)"},
    {ReportUnit::kId, "id", ""},          {ReportUnit::kText, "text", ""},
    {ReportUnit::kFlag, "flag", ""},      {ReportUnit::kOfRow, "unit", ""},
};

constexpr bool every_unit_in_order() {
  for (std::size_t i = 0; i < std::size(kUnitNames); ++i) {
    if (static_cast<std::size_t>(kUnitNames[i].unit) != i) return false;
  }
  return std::size(kUnitNames) == static_cast<std::size_t>(ReportUnit::kOfRow) + 1;
}
static_assert(every_unit_in_order(), "kUnitNames lists every ReportUnit in its order");

const UnitNames& names_of(ReportUnit u) { return kUnitNames[static_cast<std::size_t>(u)]; }

}  // namespace

const char* unit_name(ReportUnit u) { return names_of(u).name; }

const char* text_unit_suffix(ReportUnit u) { return names_of(u).text_suffix; }

std::string_view metric_of_key(std::string_view key) {
  constexpr std::string_view kNs = "_ns";
  if (key.size() > kNs.size() && key.substr(key.size() - kNs.size()) == kNs) {
    return key.substr(0, key.size() - kNs.size());
  }
  return key;
}

std::string min_max_column(std::string_view key, std::string_view which) {
  const std::string_view stem = metric_of_key(key);
  return std::string(stem) + "_" + std::string(which) + (stem.size() < key.size() ? "_ns" : "");
}

}  // namespace commprof::fields
