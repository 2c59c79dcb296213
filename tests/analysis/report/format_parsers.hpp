// SPDX-License-Identifier: MIT
// Readers of what the report writers wrote, for the report tests: CSV as RFC 4180 quotes it,
// and Prometheus' text exposition with its grammar checked line by line.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace commprof::testing {

using CsvRows = std::vector<std::vector<std::string>>;

/// RFC 4180 as the writer quotes: fields with , " or a newline in double quotes, "" for ".
inline CsvRows parse_csv(const std::string& text) {
  CsvRows rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  EXPECT_TRUE(rows.back().empty()) << "the table does not end with a newline";
  rows.pop_back();
  return rows;
}

/// series ("name{labels}") -> value, checking the grammar as it goes: one TYPE per family
/// before its samples, no series twice.
inline std::map<std::string, double> parse_exposition(const std::string& text) {
  static const std::regex help(R"(^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$)");
  static const std::regex type(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) gauge$)");
  static const std::regex sample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? (\S+)$)");
  std::map<std::string, double> series;
  std::set<std::string> typed;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, help)) continue;
    if (std::regex_match(line, m, type)) {
      EXPECT_TRUE(typed.insert(m[1]).second) << "two TYPE lines for " << m[1];
      continue;
    }
    if (!std::regex_match(line, m, sample)) {
      ADD_FAILURE() << "not a sample line: " << line;
      continue;
    }
    EXPECT_TRUE(typed.count(m[1])) << "sample before its TYPE: " << line;
    const std::string key = m[1].str() + m[2].str();
    EXPECT_FALSE(series.count(key)) << "series twice: " << key;
    series[key] = std::stod(m[5].str());
  }
  return series;
}

}  // namespace commprof::testing
