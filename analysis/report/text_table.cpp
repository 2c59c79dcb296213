// SPDX-License-Identifier: MIT
#include "analysis/report/text_table.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace commprof {
namespace {

// Bytes that start a character: all but UTF-8 continuation bytes (10xxxxxx).
std::size_t display_width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

std::string format_number(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

void write_table(std::ostream& os, const std::vector<std::vector<std::string>>& rows,
                 bool last_left) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i) {
      width[i] = std::max(width[i], display_width(row[i]));
    }
  }
  for (const auto& row : rows) {
    std::string line = " ";
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - display_width(row[i]), ' ');
      const bool left = i == 0 || (last_left && i + 1 == row.size());
      line += (i == 0 ? "" : "  ") + (left ? row[i] + pad : pad + row[i]);
    }
    while (line.size() > 1 && line.back() == ' ') line.pop_back();
    os << line << '\n';
  }
}

}  // namespace commprof
