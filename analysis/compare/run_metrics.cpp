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
#include "analysis/report_fields.hpp"
#include "src/core/errors.hpp"
#include "src/core/units.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {
namespace {

namespace rf = report_fields;

// The per-rank metrics are the per-rank fields the table compares (report_fields.hpp).
constexpr std::size_t kFamilies = rf::kComparedRankFields;

MetricUnit metric_unit(ReportUnit u) {
  return u == ReportUnit::kRatio ? MetricUnit::kRatio : MetricUnit::kNanoseconds;
}

// The report JSON's members this reads besides those, checked against the tables as it compiles.
constexpr std::string_view kRankKey = rf::field_named(rf::kRanks, "rank").key;
constexpr std::string_view kStepsKey = rf::field_named(rf::kRanks, "steps").key;
constexpr std::string_view kGroupKey = rf::field_named(rf::kGroups, "group").key;
constexpr std::string_view kGroupBusbwKey = rf::field_named(rf::kGroups, "busbw_gbps").key;
constexpr std::string_view kCollectiveKey = rf::field_named(rf::kCollectives, "collective").key;
constexpr std::string_view kCommSizeKey = rf::field_named(rf::kCollectives, "comm_size").key;
constexpr std::string_view kBytesKey = rf::field_named(rf::kCollectives, "bytes").key;
constexpr std::string_view kPlacementKey = rf::field_named(rf::kCollectives, "placement").key;
constexpr std::string_view kCollectiveBusbwKey =
    rf::field_named(rf::kCollectives, "busbw_gbps").key;
constexpr std::string_view kWaitRankKey = rf::field_named(rf::kStragglers, "rank").key;
constexpr std::string_view kWaitCausedKey = rf::field_named(rf::kStragglers, "wait_caused_ns").key;

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
  std::vector<int> rank_steps;                              // by rank read
  std::vector<std::array<RankStat, kFamilies>> rank_stats;  // by rank read, by compared field
  std::vector<BusbwRow> group_busbw, collective_busbw;
  std::vector<std::pair<int, std::int64_t>> wait_caused;  // (rank, Σ wait caused)
  std::map<int, int> steps_of_rank;
};

// A placement is named where the source gave one: both loops of an nccl-tests size are rows.
std::string collective_label(const std::string& collective, int comm_size, std::uint64_t bytes,
                             const std::string& placement) {
  return collective + " n=" + std::to_string(comm_size) + " " + format_bytes(bytes) +
         (placement.empty() ? "" : " " + placement);
}

RunMetrics metrics_from_facts(const RunFacts& f, const std::string& source) {
  RunMetrics out;
  out.source = source;
  out.ranks = static_cast<int>(f.rank_steps.size());
  out.steps =
      f.rank_steps.empty() ? 0 : *std::min_element(f.rank_steps.begin(), f.rank_steps.end());
  for (std::size_t k = 0; k < kFamilies; ++k) {
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
    const rf::Field<RankSummary>& field = *rf::kComparedFields[k];
    m.family = field.family;
    m.unit = metric_unit(field.unit);
    m.higher_is_better = field.higher_is_better;
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

const json& field(const json& object, std::string_view name, const std::string& where,
                  const std::string& source) {
  const std::string key(name);
  if (!object.is_object() || !object.contains(key)) {
    throw Error(source + ": not a commprof report: " + where + " has no \"" + key + "\"");
  }
  return object.at(key);
}

double number(const json& v, const std::string& what, const std::string& source) {
  if (!v.is_number()) throw Error(source + ": " + what + " is not a number");
  return v.get<double>();
}

}  // namespace

const std::vector<std::string>& run_metric_families() {
  static const std::vector<std::string> families = [] {
    std::vector<std::string> v;
    for (const rf::Field<RankSummary>* f : rf::kComparedFields) v.emplace_back(f->family);
    v.emplace_back("busbw");
    v.emplace_back("straggler");
    return v;
  }();
  return families;
}

bool is_ratio_family(const std::string& family) {
  for (const rf::Field<RankSummary>* f : rf::kComparedFields) {
    if (f->family == family) return f->unit == ReportUnit::kRatio;
  }
  return false;
}

RunMetrics run_metrics_from_report(const Report& report, const std::string& source) {
  RunFacts f;
  f.world_size = report.world_size;
  for (const RankSummary& s : report.ranks) {
    f.rank_steps.push_back(s.steps);
    f.steps_of_rank[s.rank] = s.steps;
    std::array<RankStat, kFamilies> stats;
    for (std::size_t k = 0; k < kFamilies; ++k) {
      const Stat& st = *std::get<const Stat*>(rf::kComparedFields[k]->get(s));
      stats[k] = {st.mean, st.stddev(), st.count};
    }
    f.rank_stats.push_back(stats);
  }
  for (const GroupRow& g : report.groups) f.group_busbw.push_back({g.group, g.busbw_gbps});
  for (const CollectiveRow& c : report.collectives) {
    f.collective_busbw.push_back(
        {collective_label(c.collective, c.comm_size, c.bytes, c.placement), c.busbw_gbps});
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
  for (const json& r : field(j, rf::kRanks.name, "the document", source)) {
    const std::string where = "a rank";
    const int rank = static_cast<int>(number(field(r, kRankKey, where, source), "rank", source));
    const int steps = static_cast<int>(number(field(r, kStepsKey, where, source), "steps", source));
    f.rank_steps.push_back(steps);
    f.steps_of_rank[rank] = steps;
    std::array<RankStat, kFamilies> stats;
    for (std::size_t k = 0; k < kFamilies; ++k) {
      const std::string_view key = rf::kComparedFields[k]->key;
      const json& st = field(r, key, where, source);
      const std::string what = "rank " + std::to_string(rank) + " " + std::string(key);
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
  for (const json& g : field(j, rf::kGroups.name, "the document", source)) {
    const json& bw = field(g, kGroupBusbwKey, "a group", source);
    f.group_busbw.push_back({field(g, kGroupKey, "a group", source).get<std::string>(),
                             bw.is_null() ? -1.0 : number(bw, "a group's busbw_gbps", source)});
  }
  for (const json& c : field(j, rf::kCollectives.name, "the document", source)) {
    const std::string where = "a collective row";
    const json& bw = field(c, kCollectiveBusbwKey, where, source);
    // Optional: reports of earlier versions have none, and n/a (null) is none.
    const auto placement = c.find(kPlacementKey);
    f.collective_busbw.push_back(
        {collective_label(
             field(c, kCollectiveKey, where, source).get<std::string>(),
             static_cast<int>(number(field(c, kCommSizeKey, where, source), "comm_size", source)),
             field(c, kBytesKey, where, source).get<std::uint64_t>(),
             placement != c.end() && placement->is_string() ? placement->get<std::string>() : ""),
         bw.is_null() ? -1.0 : number(bw, "a collective's busbw_gbps", source)});
  }
  for (const json& s : field(j, rf::kStragglers.name, "the document", source)) {
    f.wait_caused.emplace_back(
        static_cast<int>(number(field(s, kWaitRankKey, "a straggler row", source), "rank", source)),
        static_cast<std::int64_t>(
            number(field(s, kWaitCausedKey, "a straggler row", source), "wait_caused_ns", source)));
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
