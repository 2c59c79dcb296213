// SPDX-License-Identifier: MIT
// The JSON report, schema "commprof.report" v1. Units are in field names (_ns, _gbps, _bytes);
// ratios are fractions in [0, 1]; a value that is not defined is null, never NaN.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>

#include "analysis/report/report_writers.hpp"

namespace commprof {
namespace {

using nlohmann::ordered_json;

ordered_json stat_json(const Stat& s) {
  if (s.count == 0) {
    return {
        {"min", nullptr}, {"mean", nullptr}, {"max", nullptr}, {"stddev", nullptr}, {"count", 0}};
  }
  const std::optional<double> sd = s.stddev();
  return {{"min", s.min},
          {"mean", s.mean},
          {"max", s.max},
          {"stddev", sd ? ordered_json(*sd) : ordered_json(nullptr)},
          {"count", s.count}};
}
ordered_json maybe(double v) { return v < 0 ? ordered_json(nullptr) : ordered_json(v); }
template <class T>
ordered_json maybe(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

}  // namespace

namespace {

ordered_json ranks_json(const Report& r) {
  ordered_json ranks = ordered_json::array();
  for (const RankSummary& s : r.ranks) {
    ranks.push_back({{"rank", s.rank},
                     {"host", s.host},
                     {"device", s.device},
                     {"backend", s.backend},
                     {"file", s.source},
                     {"clock_offset_ns", s.clock_offset_ns},
                     {"steps", s.steps},
                     {"timed_steps", s.timed_steps},
                     {"warmup_steps", s.warmup_steps},
                     {"ops", s.ops},
                     {"step_time_ns", stat_json(s.wall_ns)},
                     {"timed_step_time_ns", stat_json(s.timed_wall_ns)},
                     {"plain_step_time_ns", stat_json(s.plain_wall_ns)},
                     {"comp_busy_ns", stat_json(s.comp_ns)},
                     {"comm_busy_ns", stat_json(s.comm_ns)},
                     {"mem_busy_ns", stat_json(s.mem_ns)},
                     {"busy_ns", stat_json(s.busy_ns)},
                     {"comm_comp_overlap_ns", stat_json(s.comm_comp_ns)},
                     {"exposed_comm_ns", stat_json(s.exposed_comm_ns)},
                     {"idle_ns", stat_json(s.idle_ns)},
                     {"overlap", stat_json(s.overlap)},
                     {"hidden_fraction", stat_json(s.hidden_fraction)}});
  }
  return ranks;
}

ordered_json across_json(const Report& r) {
  ordered_json across = ordered_json::object();
  for (const AcrossRanks& a : r.across) {
    ordered_json row = stat_json(a.stat);
    row["unit"] = a.unit;
    row["worst_rank"] = a.worst_rank < 0 ? ordered_json(nullptr) : ordered_json(a.worst_rank);
    row["worst_host"] = a.worst_rank < 0 ? ordered_json(nullptr) : ordered_json(a.worst_host);
    across[a.metric] = row;
  }
  return across;
}

ordered_json groups_json(const Report& r) {
  ordered_json groups = ordered_json::array();
  for (const GroupRow& g : r.groups) {
    groups.push_back({{"group", g.group},
                      {"communicators", g.communicators},
                      {"min_size", g.min_size},
                      {"max_size", g.max_size},
                      {"collectives", g.instances},
                      {"incomplete", g.incomplete},
                      {"bytes", g.bytes},
                      {"time_ns", g.time_ns},
                      {"busbw_gbps", maybe(g.busbw_gbps)},
                      {"mean_start_skew_ns", g.mean_skew_ns},
                      {"wait_ns", g.wait_ns}});
  }
  return groups;
}

ordered_json collectives_json(const Report& r) {
  ordered_json colls = ordered_json::array();
  for (const CollectiveRow& c : r.collectives) {
    colls.push_back({{"collective", c.collective},
                     {"comm_size", c.comm_size},
                     {"bytes", c.bytes},
                     {"count", c.count},
                     {"p50_time_ns", c.p50_ns},
                     {"p95_time_ns", c.p95_ns},
                     {"algbw_gbps", c.algbw_gbps},
                     {"busbw_gbps", maybe(c.busbw_gbps)},
                     {"peak_busbw_fraction", maybe(c.peak_fraction)},
                     {"mean_start_skew_ns", c.mean_skew_ns},
                     {"wait_ns", c.wait_ns}});
    if (!c.algo.empty()) colls.back()["nccl_algo"] = c.algo;  // only what NCCL's plugin told
  }
  return colls;
}

ordered_json worst_instances_json(const Report& r) {
  // Only the instances that cost the most waiting: a run of thousands of ranks has hundreds of
  // thousands of instances, which would swamp the report.
  std::vector<const CollectiveInstance*> worst;
  for (const CollectiveInstance& c : r.instances) worst.push_back(&c);
  const std::size_t keep = std::min<std::size_t>(worst.size(), kReportWorstInstances);
  std::partial_sort(worst.begin(), worst.begin() + static_cast<std::ptrdiff_t>(keep), worst.end(),
                    [](const CollectiveInstance* a, const CollectiveInstance* b) {
                      return a->wait_caused_ns > b->wait_caused_ns;
                    });
  worst.resize(keep);
  ordered_json instances = ordered_json::array();
  for (const CollectiveInstance* p : worst) {
    const CollectiveInstance& c = *p;
    instances.push_back({{"comm", c.comm},
                         {"seq", c.seq},
                         {"collective", c.collective},
                         {"comm_size", c.comm_size},
                         {"bytes", c.bytes},
                         {"ranks_seen", c.ranks_seen},
                         {"consistent", c.consistent},
                         {"time_ns", c.time_ns()},
                         {"max_duration_ns", c.max_duration_ns},
                         {"mean_duration_ns", c.mean_duration_ns},
                         {"start_skew_ns", c.start_skew_ns()},
                         {"end_skew_ns", c.end_skew_ns()},
                         {"first_rank", c.first_rank},
                         {"last_rank", c.last_rank},
                         {"wait_ns", c.wait_caused_ns},
                         {"algbw_gbps", c.algbw_gbps()},
                         {"busbw_gbps", maybe(c.busbw_gbps())}});
  }
  return instances;
}

ordered_json stragglers_json(const Report& r) {
  ordered_json stragglers = ordered_json::array();
  for (const RankWait& w : r.waits) {
    stragglers.push_back({{"rank", w.rank},
                          {"collectives", w.collectives},
                          {"times_last", w.times_last},
                          {"times_first", w.times_first},
                          {"wait_ns", w.wait_ns},
                          {"wait_caused_ns", w.wait_caused_ns}});
  }
  return stragglers;
}

ordered_json baseline_json(const Report& r) {
  if (!r.baseline) return nullptr;
  const BaselineComparison& b = *r.baseline;
  ordered_json in = ordered_json::array();
  for (const Interference& i : b.interference) {
    in.push_back({{"category", i.category},
                  {"names", i.names},
                  {"ops", i.ops},
                  {"run_mean_ns", i.run_mean_ns},
                  {"baseline_mean_ns", i.baseline_mean_ns},
                  {"slowdown", maybe(i.slowdown)}});
  }
  return {{"source", b.source},
          {"run_step_time_ns", b.run_step_ns},
          {"baseline_step_time_ns", b.baseline_step_ns},
          {"speedup", maybe(b.speedup)},
          {"comm_hidden_ns", b.comm_hidden_ns},
          {"run_comm_busy_ns", b.run_comm_ns},
          {"baseline_comm_busy_ns", b.baseline_comm_ns},
          {"interference", in}};
}

}  // namespace

void write_report_json(std::ostream& os, const Report& r) {
  ordered_json j;
  j["schema"] = kReportSchema;
  j["version"] = kReportSchemaVersion;
  j["units"] = {{"time", "ns"},
                {"bandwidth", "GB/s (1e9 B/s)"},
                {"bytes", "B"},
                {"ratio", "fraction in [0, 1]"},
                {"per_rank", "min/mean/max/stddev over measured (non-warm-up) steps"}};
  j["inputs"] = r.inputs;
  j["world_size"] = r.world_size;
  j["ranks_read"] = r.ranks.size();
  ordered_json problems = ordered_json::array();
  for (const FileProblem& p : r.problems)
    problems.push_back({{"file", p.file}, {"message", p.message}});
  j["problems"] = problems;
  j["missing_ranks"] = r.missing_ranks;
  j["warnings"] = r.warnings;

  j["ranks"] = ranks_json(r);
  j["across_ranks"] = across_json(r);
  j["groups"] = groups_json(r);
  j["collectives"] = collectives_json(r);
  j["peak_busbw_gbps"] = r.peak_busbw_gbps > 0 ? ordered_json(r.peak_busbw_gbps) : nullptr;
  j["instances_total"] = r.instances.size();
  j["worst_instances"] = worst_instances_json(r);
  j["stragglers"] = stragglers_json(r);
  j["baseline"] = baseline_json(r);
  os << j.dump(1) << '\n';
}

}  // namespace commprof
