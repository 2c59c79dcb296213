// SPDX-License-Identifier: MIT
// The HTML report's tables and their rows in the page's data block (report_html.cpp writes the
// page around them): both walk analysis/report_fields.hpp, so every field of every row type is a
// column of its table and a key of the data block's.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/report.hpp"

namespace commprof {

/// A number as the HTML report shows it: a time in the unit that fits, a ratio in %, GB/s, a
/// byte size, a factor ("1.250x"); counts and identifiers as integers.
std::string html_number(double v, ReportUnit unit);

/// Rows of a table written as HTML; a longer table's other rows are drawn by the page's script
/// from the data block, a page of this many at a time.
inline constexpr std::size_t kHtmlPageRows = 100;

/// A number of the data block as few characters as it takes: an integral double as an integer
/// (26600, not 26600.0: a tenth of the bytes of 16,384 ranks' rows); anything else as it is.
nlohmann::json compact_number(nlohmann::json v);

/// One sortable table per row type (the baseline's only with --baseline), under an <h3> each.
void write_html_tables(std::ostream& os, const Report& r);

/// The same rows for the page's script: per row type {"id": the HTML table's, "keys": [field
/// keys], "cols": how each HTML column shows them ([field, range end field or -1, unit name]),
/// "rows": [[values]]}, a Stat as its mean, n/a as null.
nlohmann::json html_tables_data(const Report& r);

}  // namespace commprof
