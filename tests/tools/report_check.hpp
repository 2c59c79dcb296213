// SPDX-License-Identifier: MIT
// What the parts of report_check share (report_check.cpp: what it checks, its usage): how a
// finding is told, the rank files as read here with nlohmann::json alone
// (report_check_rank_files.cpp), and the check of each format (report_check_<format>.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace report_check {

using nlohmann::json;

/// Findings so far: report_check exits 1 where there is any.
inline int failures = 0;

template <class... T>
void fail(const T&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  std::cout << "FAIL: " << os.str() << '\n';
  ++failures;
}

/// Bad arguments or unreadable input: the message on stderr, exit 2.
[[noreturn]] void die(const std::string& what);
std::string read_text(const std::string& path);
json read_json(const std::string& path);

/// Min, max, mean and count of a set of step times (ns), computed here.
struct Times {
  std::vector<std::int64_t> v;
  double mean() const {
    double sum = 0;
    for (std::int64_t x : v) sum += static_cast<double>(x);
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  }
  std::int64_t min() const { return *std::min_element(v.begin(), v.end()); }
  std::int64_t max() const { return *std::max_element(v.begin(), v.end()); }
};

/// What one rank file says, as the checks need it.
struct Rank {
  int rank = -1;
  std::string host, device, file;
  std::int64_t clock_offset_ns = 0;
  int warmup_steps = 0, measured_steps = 0, timed_steps = 0;
  std::int64_t measured_ops = 0;
  Times timed, plain;
  Times comp_union;  ///< per timed step, |∪ COMP ops|
  int stage = -1;    ///< pipeline stage by the run's layout (config tp, dp, pp); -1: no pipeline
  /// communicator kind → Σ over timed steps of |∪ its COMM ops| and of the part outside ∪COMP.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> group_comm;
  /// stream → (start + clock offset, duration) of every op of every step, warm-up included.
  std::map<std::string, std::multiset<std::pair<std::int64_t, std::int64_t>>> ops_by_stream;
  /// The step time the report gives: plain steps where there are any.
  const Times& step_times() const { return plain.v.empty() ? timed : plain; }
};

/// The collectives of the measured steps: (collective, comm size, bytes) → distinct instances
/// (communicator, sequence number), and per rank the instances it took part in.
struct Collectives {
  std::map<std::tuple<std::string, int, std::uint64_t>,
           std::set<std::pair<std::string, std::int64_t>>>
      by_size;
  std::set<std::pair<std::string, std::int64_t>> instances;
  std::set<std::string> communicators;
  std::map<int, std::set<std::pair<std::string, std::int64_t>>> of_rank;
};

/// The rank files among `inputs` (files, or directories of rank-<R>.json files), read into
/// `ranks` (by rank) and `colls`.
void read_ranks(const std::vector<std::string>& inputs, std::map<int, Rank>& ranks,
                Collectives& colls);

/// Each format's report against the rank files; every difference is a fail().
void check_text(const std::string& path, const std::map<int, Rank>& ranks);
void check_json(const std::string& path, const std::map<int, Rank>& ranks,
                const Collectives& colls);
void check_chrome(const std::string& path, const std::map<int, Rank>& ranks);
void check_csv(const std::string& dir, const std::map<int, Rank>& ranks, const Collectives& colls);

}  // namespace report_check
