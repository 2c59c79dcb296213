// SPDX-License-Identifier: MIT
#include "analysis/compare/run_metrics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/reducer.hpp"
#include "src/core/errors.hpp"
#include "src/core/units.hpp"

namespace commprof {
namespace {

// A per-rank family: its field in the report JSON and in RankSummary.
struct RankFamily {
  const char* family;
  const char* json_field;
  Stat RankSummary::*stat;
  MetricUnit unit;
  bool higher_is_better;
};

constexpr std::array<RankFamily, 9> kRankFamilies{{
    {"step", "step_time_ns", &RankSummary::wall_ns, MetricUnit::kNanoseconds, false},
    {"comp", "comp_busy_ns", &RankSummary::comp_ns, MetricUnit::kNanoseconds, false},
    {"comm", "comm_busy_ns", &RankSummary::comm_ns, MetricUnit::kNanoseconds, false},
    {"mem", "mem_busy_ns", &RankSummary::mem_ns, MetricUnit::kNanoseconds, false},
    {"busy", "busy_ns", &RankSummary::busy_ns, MetricUnit::kNanoseconds, false},
    {"exposed", "exposed_comm_ns", &RankSummary::exposed_comm_ns, MetricUnit::kNanoseconds, false},
    {"idle", "idle_ns", &RankSummary::idle_ns, MetricUnit::kNanoseconds, false},
    {"overlap", "overlap", &RankSummary::overlap, MetricUnit::kRatio, true},
    {"hidden", "hidden_fraction", &RankSummary::hidden_fraction, MetricUnit::kRatio, true},
}};

// One rank's per-step statistic of one family, as either source gives it.
struct RankStat {
  double mean = 0.0;
  std::optional<double> stddev;
  std::int64_t count = 0;
};

struct BusbwRow {
  std::string label;
  double gbps = -1.0;
};

// What both sources have in common; the metrics are made from this alone, so a report JSON
// and the rank files it was reduced from give the same metrics.
struct RunFacts {
  int world_size = 0;
  std::vector<int> rank_steps;                      // by rank read
  std::vector<std::array<RankStat, 9>> rank_stats;  // by rank read, by kRankFamilies
  std::vector<BusbwRow> group_busbw, collective_busbw;
  std::vector<std::pair<int, std::int64_t>> wait_caused;  // (rank, Σ wait caused)
  std::map<int, int> steps_of_rank;
};

std::string collective_label(const std::string& collective, int comm_size, std::uint64_t bytes) {
  return collective + " n=" + std::to_string(comm_size) + " " + format_bytes(bytes);
}

RunMetrics metrics_from_facts(const RunFacts& f, const std::string& source) {
  RunMetrics out;
  out.source = source;
  out.ranks = static_cast<int>(f.rank_steps.size());
  out.steps =
      f.rank_steps.empty() ? 0 : *std::min_element(f.rank_steps.begin(), f.rank_steps.end());
  for (std::size_t k = 0; k < kRankFamilies.size(); ++k) {
    double sum = 0.0, var_sum = 0.0;
    int ranks = 0, ranks_with_sd = 0;
    std::int64_t samples = -1;
    for (const auto& stats : f.rank_stats) {
      const RankStat& s = stats[k];
      if (s.count == 0) continue;
      sum += s.mean;
      ++ranks;
      samples = samples < 0 ? s.count : std::min(samples, s.count);
      if (s.stddev) {
        var_sum += *s.stddev * *s.stddev;
        ++ranks_with_sd;
      }
    }
    if (ranks == 0) continue;  // e.g. overlap of a run without communication
    RunMetric m;
    m.family = kRankFamilies[k].family;
    m.unit = kRankFamilies[k].unit;
    m.higher_is_better = kRankFamilies[k].higher_is_better;
    m.value = sum / ranks;
    m.samples = samples;
    // Only when every rank has one: a spread from some ranks would understate the noise.
    if (ranks_with_sd == ranks) m.spread = std::sqrt(var_sum / ranks);
    out.metrics.push_back(m);
  }
  for (const auto* rows : {&f.group_busbw, &f.collective_busbw}) {
    for (const BusbwRow& row : *rows) {
      if (row.gbps < 0) continue;  // a collective without a bus factor
      RunMetric m;
      m.family = "busbw";
      m.label = row.label;
      m.unit = MetricUnit::kGBps;
      m.higher_is_better = true;
      m.value = row.gbps;
      out.metrics.push_back(m);
    }
  }
  // The straggler: the rank whose late arrivals made the others wait longest, per step.
  if (!f.wait_caused.empty()) {
    RunMetric m;
    m.family = "straggler";
    m.unit = MetricUnit::kNanoseconds;
    int worst = -1;
    for (const auto& [rank, caused] : f.wait_caused) {
      const auto steps = f.steps_of_rank.find(rank);
      if (steps == f.steps_of_rank.end() || steps->second <= 0) continue;
      const double per_step = static_cast<double>(caused) / steps->second;
      if (worst < 0 || per_step > m.value) {
        worst = rank;
        m.value = per_step;
      }
    }
    if (worst >= 0) {
      m.note = "rank " + std::to_string(worst) + " (wait it caused per step)";
      out.metrics.push_back(m);
    }
  }
  return out;
}

using nlohmann::json;

const json& field(const json& object, const char* name, const std::string& where,
                  const std::string& source) {
  if (!object.is_object() || !object.contains(name)) {
    throw Error(source + ": not a commprof report: " + where + " has no \"" + name + "\"");
  }
  return object.at(name);
}

double number(const json& v, const std::string& what, const std::string& source) {
  if (!v.is_number()) throw Error(source + ": " + what + " is not a number");
  return v.get<double>();
}

}  // namespace

const std::vector<std::string>& run_metric_families() {
  static const std::vector<std::string> families = [] {
    std::vector<std::string> v;
    for (const RankFamily& f : kRankFamilies) v.emplace_back(f.family);
    v.emplace_back("busbw");
    v.emplace_back("straggler");
    return v;
  }();
  return families;
}

bool is_ratio_family(const std::string& family) {
  return family == "overlap" || family == "hidden";
}

RunMetrics run_metrics_from_report(const Report& report, const std::string& source) {
  RunFacts f;
  f.world_size = report.world_size;
  for (const RankSummary& s : report.ranks) {
    f.rank_steps.push_back(s.steps);
    f.steps_of_rank[s.rank] = s.steps;
    std::array<RankStat, 9> stats;
    for (std::size_t k = 0; k < kRankFamilies.size(); ++k) {
      const Stat& st = s.*kRankFamilies[k].stat;
      stats[k] = {st.mean, st.stddev(), st.count};
    }
    f.rank_stats.push_back(stats);
  }
  for (const GroupRow& g : report.groups) f.group_busbw.push_back({g.group, g.busbw_gbps});
  for (const CollectiveRow& c : report.collectives) {
    f.collective_busbw.push_back(
        {collective_label(c.collective, c.comm_size, c.bytes), c.busbw_gbps});
  }
  for (const RankWait& w : report.waits) f.wait_caused.emplace_back(w.rank, w.wait_caused_ns);
  RunMetrics m = metrics_from_facts(f, source);
  for (const FileProblem& p : report.problems) m.warnings.push_back(p.message);
  for (const std::string& w : report.warnings) m.warnings.push_back(w);
  return m;
}

RunMetrics run_metrics_from_report_json(const std::string& text, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(source + ": not valid JSON (" + e.what() + ")");
  }
  const json& schema = field(j, "schema", "the document", source);
  if (!schema.is_string() || schema.get<std::string>() != kReportSchema) {
    throw Error(source + ": not a commprof report (schema is not \"" + std::string(kReportSchema) +
                "\")");
  }
  const json& version = field(j, "version", "the document", source);
  if (!version.is_number_integer() || version.get<int>() != kReportSchemaVersion) {
    throw Error(source + ": report schema version " + version.dump() + " is not the " +
                std::to_string(kReportSchemaVersion) + " this commprof reads");
  }
  RunFacts f;
  for (const json& r : field(j, "ranks", "the document", source)) {
    const std::string where = "a rank";
    const int rank = static_cast<int>(number(field(r, "rank", where, source), "rank", source));
    const int steps = static_cast<int>(number(field(r, "steps", where, source), "steps", source));
    f.rank_steps.push_back(steps);
    f.steps_of_rank[rank] = steps;
    std::array<RankStat, 9> stats;
    for (std::size_t k = 0; k < kRankFamilies.size(); ++k) {
      const json& st = field(r, kRankFamilies[k].json_field, where, source);
      const std::string what =
          std::string("rank ") + std::to_string(rank) + " " + kRankFamilies[k].json_field;
      stats[k].count = static_cast<std::int64_t>(
          number(field(st, "count", what, source), what + ".count", source));
      if (stats[k].count == 0) continue;
      stats[k].mean = number(field(st, "mean", what, source), what + ".mean", source);
      // Reports written before commprof kept a standard deviation have none: no spread.
      if (st.contains("stddev") && !st.at("stddev").is_null()) {
        stats[k].stddev = number(st.at("stddev"), what + ".stddev", source);
      }
    }
    f.rank_stats.push_back(stats);
  }
  for (const json& g : field(j, "groups", "the document", source)) {
    const json& bw = field(g, "busbw_gbps", "a group", source);
    f.group_busbw.push_back({field(g, "group", "a group", source).get<std::string>(),
                             bw.is_null() ? -1.0 : number(bw, "a group's busbw_gbps", source)});
  }
  for (const json& c : field(j, "collectives", "the document", source)) {
    const std::string where = "a collective row";
    const json& bw = field(c, "busbw_gbps", where, source);
    f.collective_busbw.push_back(
        {collective_label(
             field(c, "collective", where, source).get<std::string>(),
             static_cast<int>(number(field(c, "comm_size", where, source), "comm_size", source)),
             field(c, "bytes", where, source).get<std::uint64_t>()),
         bw.is_null() ? -1.0 : number(bw, "a collective's busbw_gbps", source)});
  }
  for (const json& s : field(j, "stragglers", "the document", source)) {
    f.wait_caused.emplace_back(
        static_cast<int>(number(field(s, "rank", "a straggler row", source), "rank", source)),
        static_cast<std::int64_t>(number(field(s, "wait_caused_ns", "a straggler row", source),
                                         "wait_caused_ns", source)));
  }
  RunMetrics m = metrics_from_facts(f, source);
  for (const json& p : field(j, "problems", "the document", source)) {
    if (p.is_object() && p.contains("message") && p.at("message").is_string())
      m.warnings.push_back(p.at("message").get<std::string>());
  }
  for (const json& w : field(j, "warnings", "the document", source)) {
    if (w.is_string()) m.warnings.push_back(w.get<std::string>());
  }
  return m;
}

RunMetrics load_run_metrics(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot read '" + path + "'");
    // A report JSON names its schema within its first lines; a rank file names another.
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    if (head.find(std::string("\"") + kReportSchema + "\"") != std::string::npos) {
      std::ostringstream all;
      all << head << in.rdbuf();
      return run_metrics_from_report_json(all.str(), path);
    }
  }
  const Report report = reduce_rank_files(expand_rank_inputs({path}), ReduceOptions{});
  if (report.ranks.empty()) {
    std::string why;
    for (const FileProblem& p : report.problems) why += "\n  " + p.message;
    throw Error("'" + path + "': no rank file could be read" + why);
  }
  return run_metrics_from_report(report, path);
}

}  // namespace commprof
