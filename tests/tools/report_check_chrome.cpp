// SPDX-License-Identifier: MIT
// report_check chrome: one complete ("X") event per op of every step of the Chrome trace, on its
// rank's process and its stream's thread, at the op's time.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "report_check.hpp"

namespace report_check {

namespace {

/// "ts"/"dur" in µs with 3 decimals (exact ns) → ns.
std::int64_t ns_of_micros(const json& v) { return std::llround(v.get<double>() * 1e3); }

}  // namespace

void check_chrome(const std::string& path, const std::map<int, Rank>& ranks) {
  const json j = read_json(path);
  if (!j.contains("traceEvents") || !j.at("traceEvents").is_array()) {
    fail("no traceEvents array");
    return;
  }
  std::map<std::pair<int, int>, std::string> thread_name;  // (pid, tid) → stream
  std::set<int> processes;
  for (const json& e : j.at("traceEvents")) {
    if (e.at("ph") != "M") continue;
    if (e.at("name") == "thread_name") {
      thread_name[{e.at("pid").get<int>(), e.at("tid").get<int>()}] =
          e.at("args").at("name").get<std::string>();
    } else if (e.at("name") == "process_name") {
      processes.insert(e.at("pid").get<int>());
    }
  }
  // (rank, stream) → the events' (ts, dur), in ns.
  std::map<std::pair<int, std::string>, std::multiset<std::pair<std::int64_t, std::int64_t>>> got;
  std::size_t complete = 0;
  for (const json& e : j.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    ++complete;
    if (!e.contains("name") || !e.at("name").is_string() || !e.contains("ts") ||
        !e.at("ts").is_number() || !e.contains("dur") || !e.at("dur").is_number()) {
      fail("an X event without name, ts or dur: ", e.dump());
      continue;
    }
    const std::pair<int, int> thread{e.at("pid").get<int>(), e.at("tid").get<int>()};
    const auto name = thread_name.find(thread);
    if (name == thread_name.end()) {
      fail("an X event on pid ", thread.first, " tid ", thread.second,
           ", which no thread_name names");
      continue;
    }
    got[{thread.first, name->second}].insert({ns_of_micros(e.at("ts")), ns_of_micros(e.at("dur"))});
  }
  std::size_t want_events = 0;
  for (const auto& [rank, r] : ranks) {
    if (processes.count(rank) == 0) fail("no process_name event for rank ", rank);
    for (const auto& [stream, ops] : r.ops_by_stream) {
      want_events += ops.size();
      const auto it = got.find({rank, stream});
      const std::size_t n = it == got.end() ? 0 : it->second.size();
      if (n != ops.size()) {
        fail("rank ", rank, " stream ", stream, ": ", n, " X events, ", ops.size(), " ops in ",
             r.file);
      } else if (it->second != ops) {
        fail("rank ", rank, " stream ", stream,
             ": the X events' ts/dur differ from the ops' times");
      }
    }
  }
  if (complete != want_events) fail(complete, " X events in all, ", want_events, " ops");
  if (want_events == 0) fail("the rank files hold no op: nothing to check");
}

}  // namespace report_check
