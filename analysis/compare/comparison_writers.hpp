// SPDX-License-Identifier: MIT
// `commprof compare`'s formats: text for a terminal or CI log, JSON (schema commprof.compare
// v1) for tools, one self-contained HTML page.
#pragma once

#include <iosfwd>

#include "analysis/compare/run_comparison.hpp"

namespace commprof {

inline constexpr const char* kCompareSchema = "commprof.compare";
inline constexpr int kCompareSchemaVersion = 1;

void write_comparison_text(std::ostream& os, const Comparison& c);
void write_comparison_json(std::ostream& os, const Comparison& c);
void write_comparison_html(std::ostream& os, const Comparison& c);

}  // namespace commprof
