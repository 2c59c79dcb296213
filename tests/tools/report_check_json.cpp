// SPDX-License-Identifier: MIT
// report_check json: every rank of the JSON report with its step and op counts and step-time
// statistics; the collectives and their instance counts.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "report_check.hpp"

namespace report_check {

namespace {

void check_stat(const json& stat, const Times& t, const std::string& what) {
  if (stat.at("count").get<std::size_t>() != t.v.size()) {
    fail(what, ": count ", stat.at("count"), ", expected ", t.v.size());
    return;
  }
  if (t.v.empty()) return;
  if (stat.at("min").get<double>() != static_cast<double>(t.min()) ||
      stat.at("max").get<double>() != static_cast<double>(t.max())) {
    fail(what, ": min/max ", stat.at("min"), "/", stat.at("max"), ", expected ", t.min(), "/",
         t.max());
  }
  if (std::fabs(stat.at("mean").get<double>() - t.mean()) > 1e-9 * t.mean() + 1e-6) {
    fail(what, ": mean ", stat.at("mean"), ", expected ", t.mean());
  }
}

}  // namespace

void check_json(const std::string& path, const std::map<int, Rank>& ranks,
                const Collectives& colls) {
  const json j = read_json(path);
  if (j.at("schema") != "commprof.report") fail("schema ", j.at("schema"));
  if (j.at("ranks_read").get<std::size_t>() != ranks.size()) {
    fail("ranks_read ", j.at("ranks_read"), ", expected ", ranks.size());
  }
  if (!j.at("problems").empty()) fail("problems: ", j.at("problems").dump());
  if (!j.at("missing_ranks").empty()) fail("missing ranks: ", j.at("missing_ranks").dump());
  std::set<int> seen;
  for (const json& jr : j.at("ranks")) {
    const int rank = jr.at("rank").get<int>();
    const auto it = ranks.find(rank);
    if (it == ranks.end() || !seen.insert(rank).second) {
      fail("ranks[] holds rank ", rank, it == ranks.end() ? ", of no file given" : " twice");
      continue;
    }
    const Rank& r = it->second;
    const std::string at = "rank " + std::to_string(rank);
    if (jr.at("host") != r.host) fail(at, ": host ", jr.at("host"), ", expected ", r.host);
    if (jr.at("steps") != r.measured_steps) {
      fail(at, ": steps ", jr.at("steps"), ", expected ", r.measured_steps);
    }
    if (jr.at("warmup_steps") != r.warmup_steps) {
      fail(at, ": warmup_steps ", jr.at("warmup_steps"), ", expected ", r.warmup_steps);
    }
    if (jr.at("timed_steps") != r.timed_steps) {
      fail(at, ": timed_steps ", jr.at("timed_steps"), ", expected ", r.timed_steps);
    }
    if (jr.at("ops") != r.measured_ops) {
      fail(at, ": ops ", jr.at("ops"), ", expected ", r.measured_ops);
    }
    check_stat(jr.at("timed_step_time_ns"), r.timed, at + " timed_step_time_ns");
    check_stat(jr.at("plain_step_time_ns"), r.plain, at + " plain_step_time_ns");
    check_stat(jr.at("step_time_ns"), r.step_times(), at + " step_time_ns");
  }
  if (seen.size() != ranks.size()) fail("ranks[] holds ", seen.size(), " of ", ranks.size());
  if (j.at("instances_total").get<std::size_t>() != colls.instances.size()) {
    fail("instances_total ", j.at("instances_total"), ", expected ", colls.instances.size());
  }
  std::map<std::tuple<std::string, int, std::uint64_t>, std::size_t> rows;
  for (const json& c : j.at("collectives")) {
    rows[{c.at("collective").get<std::string>(), c.at("comm_size").get<int>(),
          c.at("bytes").get<std::uint64_t>()}] = c.at("count").get<std::size_t>();
  }
  std::map<std::tuple<std::string, int, std::uint64_t>, std::size_t> want;
  for (const auto& [key, ids] : colls.by_size) want[key] = ids.size();
  if (rows != want) {
    fail("collectives[]: ", rows.size(), " rows by (collective, comm size, bytes), expected ",
         want.size(), " with the instance counts of the rank files");
  }
}

}  // namespace report_check
