// SPDX-License-Identifier: MIT
// report_check: the rank files read with nlohmann::json alone (none of commprof's readers or
// reductions), into what the checks compare each report with.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "report_check.hpp"

namespace report_check {

namespace fs = std::filesystem;

namespace {

using Spans = std::vector<std::pair<std::int64_t, std::int64_t>>;  // [start, end)

/// The spans merged: sorted, disjoint, none empty.
Spans merged(Spans s) {
  std::sort(s.begin(), s.end());
  Spans out;
  for (const auto& [a, b] : s) {
    if (b <= a) continue;
    if (!out.empty() && a <= out.back().second) {
      out.back().second = std::max(out.back().second, b);
    } else {
      out.emplace_back(a, b);
    }
  }
  return out;
}

std::int64_t length(const Spans& merged_spans) {
  std::int64_t n = 0;
  for (const auto& [a, b] : merged_spans) n += b - a;
  return n;
}

/// |A ∩ B| of two merged span lists.
std::int64_t overlap(const Spans& a, const Spans& b) {
  std::int64_t n = 0;
  std::size_t i = 0, k = 0;
  while (i < a.size() && k < b.size()) {
    n += std::max<std::int64_t>(
        0, std::min(a[i].second, b[k].second) - std::max(a[i].first, b[k].first));
    (a[i].second < b[k].second ? i : k)++;
  }
  return n;
}

/// "ep0" → "ep", "tp0_1" → "tp": a communicator's kind, as docs/analysis.md defines it.
std::string kind_of(const std::string& comm) {
  std::size_t n = comm.size();
  while (n > 0 && std::string("0123456789_.-").find(comm[n - 1]) != std::string::npos) --n;
  return n == 0 ? comm : comm.substr(0, n);
}

std::vector<std::string> rank_file_paths(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& in : inputs) {
    if (!fs::is_directory(in)) {
      files.push_back(in);
      continue;
    }
    for (const auto& e : fs::directory_iterator(in)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("rank-", 0) == 0 && name.size() > 10 &&
          name.compare(name.size() - 5, 5, ".json") == 0) {
        files.push_back(e.path().string());
      }
    }
  }
  if (files.empty()) die("no rank file among the inputs");
  return files;
}

}  // namespace

void read_ranks(const std::vector<std::string>& inputs, std::map<int, Rank>& ranks,
                Collectives& colls) {
  for (const std::string& path : rank_file_paths(inputs)) {
    const json j = read_json(path);
    Rank r;
    r.rank = j.at("rank").get<int>();
    r.host = j.at("host").get<std::string>();
    r.device = j.at("device").get<std::string>();
    r.file = path;
    r.clock_offset_ns = j.at("clock_offset_ns").get<std::int64_t>();
    // The workloads place ranks TP fastest, then DP, then PP (workloads/layout.cpp).
    if (j.contains("config") && j.at("config").is_object()) {
      const json& c = j.at("config");
      const int tp = c.value("tp", 0), dp = c.value("dp", 0), pp = c.value("pp", 0);
      if (pp >= 2 && tp >= 1 && dp >= 1) r.stage = r.rank / (tp * dp);
    }
    for (const json& step : j.at("steps")) {
      const json& ops = step.at("ops");
      for (const json& op : ops) {
        const std::int64_t start = op.at("start_ns").get<std::int64_t>();
        r.ops_by_stream[op.at("stream").get<std::string>()].insert(
            {start + r.clock_offset_ns, op.at("end_ns").get<std::int64_t>() - start});
      }
      if (step.at("warmup").get<bool>()) {
        ++r.warmup_steps;
        continue;
      }
      ++r.measured_steps;
      const std::int64_t wall =
          step.at("end_ns").get<std::int64_t>() - step.at("start_ns").get<std::int64_t>();
      (ops.empty() ? r.plain : r.timed).v.push_back(wall);
      if (!ops.empty()) {
        ++r.timed_steps;
        std::vector<std::pair<std::int64_t, std::int64_t>> comp;  // [start, end)
        for (const json& op : ops) {
          if (op.at("category") == "COMP")
            comp.emplace_back(op.at("start_ns").get<std::int64_t>(),
                              op.at("end_ns").get<std::int64_t>());
        }
        std::sort(comp.begin(), comp.end());
        std::int64_t covered = 0, reach = std::numeric_limits<std::int64_t>::min();
        for (const auto& [a, b] : comp) {
          if (b > reach) covered += b - std::max(a, reach);
          reach = std::max(reach, b);
        }
        r.comp_union.v.push_back(covered);
        const Spans comp_spans = merged(comp);
        std::map<std::string, Spans> by_kind;
        for (const json& op : ops) {
          const std::string comm = op.value("comm", "");
          if (op.at("category") != "COMM" || comm.empty()) continue;
          by_kind[kind_of(comm)].emplace_back(op.at("start_ns").get<std::int64_t>(),
                                              op.at("end_ns").get<std::int64_t>());
        }
        for (const auto& [kind, spans] : by_kind) {
          const Spans m = merged(spans);
          auto& [busy, exposed] = r.group_comm[kind];
          busy += length(m);
          exposed += length(m) - overlap(m, comp_spans);
        }
      }
      r.measured_ops += static_cast<std::int64_t>(ops.size());
      for (const json& op : ops) {
        // Point-to-point transfers carry no sequence number (-1): they are no collective instance.
        if (op.at("category") != "COMM" || op.at("collective").get<std::string>().empty() ||
            op.at("seq").get<std::int64_t>() < 0)
          continue;
        const std::pair<std::string, std::int64_t> id{op.at("comm").get<std::string>(),
                                                      op.at("seq").get<std::int64_t>()};
        colls
            .by_size[{op.at("collective").get<std::string>(), op.at("comm_size").get<int>(),
                      op.at("bytes").get<std::uint64_t>()}]
            .insert(id);
        colls.instances.insert(id);
        colls.communicators.insert(id.first);
        colls.of_rank[r.rank].insert(id);
      }
    }
    if (!ranks.emplace(r.rank, r).second) die("rank " + std::to_string(r.rank) + " given twice");
  }
}

}  // namespace report_check
