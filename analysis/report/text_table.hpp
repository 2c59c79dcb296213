// SPDX-License-Identifier: MIT
// Fixed-width tables for a terminal or CI log: what the text report and `commprof compare` print.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace commprof {

/// One number through a printf format ("%.1f").
std::string format_number(const char* format, double v);

/// Rows padded to each column's widest cell, by display width (a UTF-8 character such as µ or ±
/// counts once). The first column is left-aligned, and the last too when `last_left`; the others
/// are right-aligned. One space starts a line, two separate columns; no line ends in a space.
void write_table(std::ostream& os, const std::vector<std::vector<std::string>>& rows,
                 bool last_left = false);

}  // namespace commprof
