// SPDX-License-Identifier: MIT
// report_check text: a "Per rank" row for every rank of the text report, with its host, device,
// measured steps and mean step time.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "report_check.hpp"

namespace report_check {

namespace {

std::vector<std::string> split_ws(const std::string& line) {
  std::istringstream is(line);
  std::vector<std::string> out;
  for (std::string w; is >> w;) out.push_back(w);
  return out;
}

/// Lines of `text` from the one after `header` to the next empty line.
std::vector<std::string> section(const std::string& text, const std::string& header) {
  std::istringstream is(text);
  std::vector<std::string> out;
  bool in = false;
  for (std::string line; std::getline(is, line);) {
    if (!in) {
      in = line == header;
      continue;
    }
    if (line.empty()) break;
    out.push_back(line);
  }
  if (!in) fail("no section '", header, "'");
  return out;
}

}  // namespace

void check_text(const std::string& path, const std::map<int, Rank>& ranks) {
  const std::string text = read_text(path);
  const std::string n = std::to_string(ranks.size());
  const std::string first =
      "# commprof report: " + n + " of " + n + " ranks, from " + n + " rank file(s)";
  if (text.rfind(first + "\n", 0) != 0) fail("the report does not begin with '", first, "'");
  const std::vector<std::string> rows = section(text, "## Per rank");
  // The header row, then one row per rank: rank, host, device, steps(#), step(us), ...
  if (rows.size() != ranks.size() + 1) {
    fail("'Per rank' holds ", rows.size(), " rows, expected a header and ", ranks.size());
  }
  std::set<int> seen;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> cells = split_ws(rows[i]);
    const auto it = cells.empty() ? ranks.end() : ranks.find(std::atoi(cells[0].c_str()));
    if (it == ranks.end()) {
      fail("'Per rank' row of no rank given: '", rows[i], "'");
      continue;
    }
    const Rank& r = it->second;
    seen.insert(r.rank);
    std::vector<std::string> want = {std::to_string(r.rank), r.host};
    for (const std::string& w : split_ws(r.device)) want.push_back(w);
    want.push_back(std::to_string(r.measured_steps));
    if (cells.size() <= want.size() || !std::equal(want.begin(), want.end(), cells.begin())) {
      fail("rank ", r.rank, ": row '", rows[i], "', expected it to begin with rank, host '", r.host,
           "', device '", r.device, "' and ", r.measured_steps, " steps");
      continue;
    }
    // step(us), printed to 0.1 µs.
    const double shown = std::atof(cells[want.size()].c_str());
    const double mean_us = r.step_times().mean() / 1e3;
    if (std::fabs(shown - mean_us) > 0.05 + 1e-9 * mean_us) {
      fail("rank ", r.rank, ": step(us) ", cells[want.size()], ", the rank file's steps say ",
           mean_us);
    }
  }
  if (seen.size() != ranks.size()) fail("'Per rank' rows name ", seen.size(), " of ", n, " ranks");
}

}  // namespace report_check
