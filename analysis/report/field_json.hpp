// SPDX-License-Identifier: MIT
// A report field's value as JSON, for the JSON report and the HTML page's data block.
#pragma once

#include <string>
#include <variant>

#include "analysis/report_fields.hpp"

namespace commprof {

/// `v` as JSON: a number, text, a flag, a unit by its name, nothing as null; a Stat as its
/// mean (the JSON report writes a Stat's whole object itself).
template <class Json>
Json flat_json(const report_fields::Value& v) {
  if (const auto* s = std::get_if<const Stat*>(&v)) return (*s)->mean;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* t = std::get_if<std::string_view>(&v)) return std::string(*t);
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  if (const auto* u = std::get_if<ReportUnit>(&v)) return report_fields::unit_name(*u);
  return nullptr;
}

}  // namespace commprof
