// SPDX-License-Identifier: MIT
// `commprof project`'s output from a hand-built projection and validation: every field of each
// section's table (workloads/commands/project_fields.hpp) reaches the text (its label in the
// section's header) and the JSON (its key, and only the table's keys, in order), and a few
// figures as worked out by hand (ns shown as ms, fractions as %).
#include "workloads/commands/project_report.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "workloads/commands/project_fields.hpp"
#include "workloads/layout.hpp"

namespace commprof {
namespace {

namespace pf = project_fields;

template <class Row>
std::vector<std::string> json_keys(const fields::Table<Row>& table) {
  std::vector<std::string> keys;
  for (const auto& f : table) {
    if (fields::in_json(f)) keys.emplace_back(f.key);
  }
  return keys;
}

std::vector<std::string> keys_of(const nlohmann::ordered_json& object) {
  std::vector<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.push_back(it.key());
  return keys;
}

std::string escaped(const std::string& text) {
  return std::regex_replace(text, std::regex(R"([()%.+*?|\[\]{}^$\\])"), R"(\$&)");
}

// Whether `text` has a line that is the table's text header: its labels, in order.
template <class Row>
bool has_header(const std::string& text, const fields::Table<Row>& table) {
  std::string pattern = "(^|\n) ";
  bool first = true;
  for (const std::string& label : fields::text_labels(table)) {
    pattern += (first ? "" : " +") + escaped(label);
    first = false;
  }
  return std::regex_search(text, std::regex(pattern + "\n"));
}

struct Fixture {
  MeasuredRun run;
  ProjectionBasis basis;
  Projection p;
  Validation v;

  Fixture() {
    basis.inputs = {"runA", "runB"};
    basis.gpus_per_node_why = "given";
    run.rates.steps = 2;
    run.figures.measured.step_ns = 3000000.0;
    MeasuredRun source = run;
    source.files = {"runA/rank-0.json"};
    run.sources = {source, source};
    run.combined = {{"host gap COMP", "us", 2, 1.5, 1.0, 2.0, true}};
    p.ranks = 2;
    p.outcome.step_ns = 2000000;           // 2.000 ms
    p.outcome.exposed_comm_ns = 500000.0;  // 0.500 ms
    p.outcome.comm_ns = 1000000.0;
    p.outcome.overlap = 0.5;  // 50.0 %
    p.path_ns = 1800000;
    p.comms = {{"dp", "allreduce", 4, 1000000.0, 4000000.0, false}};  // 4 B/ns = 4.000 GB/s
    p.slowdown_applied = true;
    SlowdownFactor f;
    f.alone_ops = 3;
    f.overlapped_ops = 200;
    f.mean_overlap = 0.25;
    f.slowdown = 0.125;
    f.measured_slowdown = true;
    p.slowdown.comp["gemm/flop"] = f;
    p.slowdown.comp_pooled["flop"] = f;
    p.slowdown.comm[CommKey{CollectiveKind::kAllReduce, "dp", 0, false}] = f;
    p.slowdown_figures = run.combined;
    p.applied_comp = {10, 4, 0.5, 1000000.0, 1200000.0};
    v.estimate_model = "NCCL";
    v.estimates = {{"dp", 4, 4, 900000.0, 1100000.0}};
    v.runs = {{"out1", {}}, {"out2", {}}};
    v.choose_median();
  }
  std::string text() const {
    std::ostringstream os;
    write_projection_text(os, run, basis, p, &v);
    return os.str();
  }
  nlohmann::ordered_json json() const {
    std::ostringstream os;
    write_projection_json(os, run, basis, p, &v);
    return nlohmann::ordered_json::parse(os.str());
  }
};

TEST(ProjectReport, EveryTableFieldReachesTheText) {
  const std::string t = Fixture().text();
  EXPECT_TRUE(has_header(t, pf::kSourceRuns)) << t;
  EXPECT_TRUE(has_header(t, pf::kFigures)) << t;
  EXPECT_TRUE(has_header(t, pf::kComms)) << t;
  EXPECT_TRUE(has_header(t, pf::kSlowdown)) << t;
  EXPECT_TRUE(has_header(t, pf::kApplied)) << t;
  EXPECT_TRUE(has_header(t, pf::kEstimates)) << t;
  EXPECT_TRUE(has_header(t, pf::kValidationRuns)) << t;
  // The comparison with the validation run: a row per compared figure of kMeasured.
  for (const auto& f : pf::kMeasured) {
    if (!fields::in_text(f)) continue;
    EXPECT_TRUE(std::regex_search(t, std::regex("\n " + escaped(std::string(f.label)) +
                                                " +[0-9n][^\n]* +[0-9n][^\n]* +[-+0-9n]")))
        << f.label << " not compared in\n"
        << t;
  }
  for (const std::string& label : fields::text_labels(pf::kPredicted)) {
    EXPECT_TRUE(std::regex_search(t, std::regex("\n " + escaped(label) + " +[0-9n]")))
        << label << " not in\n"
        << t;
  }
  // Worked out by hand: 2 000 000 ns is 2.000 ms, overlap 0.5 is 50.0 %, the communicator's
  // 4 000 000 bus bytes over 1 000 000 ns are 4.000 GB/s.
  EXPECT_TRUE(std::regex_search(t, std::regex("\n step \\(ms\\) +2\\.000\n"))) << t;
  EXPECT_TRUE(std::regex_search(t, std::regex("\n overlap \\(%\\) +50\\.0\n"))) << t;
  EXPECT_TRUE(
      std::regex_search(t, std::regex("\n dp +allreduce +4 +1\\.000 +4\\.000 +intra_node\n")))
      << t;
  // The library estimated every call: 0.900 ms against 1.100 measured, -18.2 %.
  EXPECT_TRUE(std::regex_search(
      t, std::regex("\n dp +4 +4 +1\\.000 +0\\.900 +1\\.100 +-9\\.1% +-18\\.2%\n")))
      << t;
}

TEST(ProjectReport, EveryTableFieldReachesTheJson) {
  const nlohmann::ordered_json j = Fixture().json();
  const nlohmann::ordered_json& proj = j.at("projection");
  EXPECT_EQ(keys_of(proj.at("predicted")), json_keys(pf::kPredicted));
  EXPECT_EQ(proj.at("predicted").at("step_time_ns"), 2000000);
  EXPECT_EQ(keys_of(proj.at("communicators").at(0)), json_keys(pf::kComms));
  const nlohmann::ordered_json& slowdown = proj.at("overlap_slowdown");
  EXPECT_EQ(keys_of(slowdown.at("comp").at("gemm/flop")), json_keys(pf::kSlowdown));
  EXPECT_EQ(keys_of(slowdown.at("comp_pooled").at("flop")), json_keys(pf::kSlowdown));
  std::vector<std::string> comm = {"collective", "group", "size_class", "link"};
  for (const std::string& k : json_keys(pf::kSlowdown)) comm.push_back(k);
  EXPECT_EQ(keys_of(slowdown.at("comm").at(0)), comm);
  EXPECT_EQ(keys_of(slowdown.at("applied_comp")), json_keys(pf::kApplied));
  EXPECT_EQ(keys_of(slowdown.at("source_runs_figures").at(0)), json_keys(pf::kFigures));
  const nlohmann::ordered_json& sources = j.at("basis").at("source_runs");
  EXPECT_EQ(sources.at("runs").size(), 2u);
  EXPECT_EQ(keys_of(sources.at("runs").at(0)), json_keys(pf::kSourceRuns));
  EXPECT_EQ(keys_of(sources.at("figures").at(0)), json_keys(pf::kFigures));
  const nlohmann::ordered_json& groups = j.at("validation").at("library_estimate").at("groups");
  EXPECT_EQ(keys_of(groups.at(0)), json_keys(pf::kEstimates));
  EXPECT_EQ(groups.at(0).at("projected_ns"), 1000000.0);
}

// The validation's tables reach the JSON: the measured figures (kMeasured), an error per
// compared figure (a time's in % under error_pct, a ratio's in points beside it), each run
// (kValidationRuns); worked out by hand: 2.000 ms predicted against 2.500 ms is -20.0 %, overlap
// 50 % against 37.5 % is +12.5 pp.
TEST(ProjectReport, TheValidationTablesReachTheTextAndTheJson) {
  Fixture x;
  x.v.runs[0].figures.step_ns = 2500000.0;
  x.v.runs[0].figures.overlap = 0.375;
  x.v.runs[1].figures.step_ns = 4000000.0;
  x.v.choose_median();
  const nlohmann::ordered_json v = x.json().at("validation");
  EXPECT_EQ(keys_of(v.at("measured")), json_keys(pf::kMeasured));
  std::vector<std::string> errors, points;
  for (const auto& f : pf::kMeasured) {
    if (!fields::in_text(f)) continue;
    if (f.unit == ReportUnit::kRatio) {
      points.push_back(std::string(f.key) + "_error_pp");
    } else {
      errors.emplace_back(fields::metric_of_key(f.key));
    }
  }
  EXPECT_EQ(keys_of(v.at("error_pct")), errors);
  for (const std::string& k : points) EXPECT_TRUE(v.contains(k)) << k;
  EXPECT_DOUBLE_EQ(v.at("error_pct").at("step_time").get<double>(), -20.0);
  EXPECT_DOUBLE_EQ(v.at("overlap_error_pp").get<double>(), 12.5);
  ASSERT_EQ(v.at("runs").size(), 2u);
  EXPECT_EQ(keys_of(v.at("runs").at(1)), json_keys(pf::kValidationRuns));
  EXPECT_DOUBLE_EQ(v.at("runs").at(1).at("step_error_pct").get<double>(), -50.0);
  const std::string t = x.text();
  EXPECT_TRUE(std::regex_search(t, std::regex("\n step \\(ms\\) +2\\.000 +2\\.500 +-20\\.0%\n")))
      << t;
  EXPECT_TRUE(
      std::regex_search(t, std::regex("\n overlap \\(%\\) +50\\.0 +37\\.5 +\\+12\\.5 pp\n")))
      << t;
  EXPECT_TRUE(std::regex_search(t, std::regex("\n 2 +4\\.000 +-50\\.0% +out2\n"))) << t;
}

// --sweep: the ranking's text walks kSweep, and each ranked projection in the JSON carries every
// field of it under the same key (at its top or in "predicted") with the same value.
TEST(ProjectReport, TheSweepTableReachesTheTextAndTheJson) {
  Fixture x;
  Projection q = x.p;
  q.nodes = 2;
  q.outcome.step_ns = 3000000;
  q.outcome.overlap.reset();
  const std::vector<Projection> ranked = {x.p, q};
  std::ostringstream text, json;
  write_sweep_text(text, x.run, x.basis, 2, ranked, {});
  write_sweep_json(json, x.run, x.basis, 2, ranked, {});
  const std::string t = text.str();
  EXPECT_TRUE(has_header(t, pf::kSweep)) << t;
  EXPECT_TRUE(std::regex_search(t, std::regex("\n 2 +tp=1,pp=1,dp=1 +3\\.000 +0\\.500 +n/a +2\n")))
      << t;
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(json.str());
  ASSERT_EQ(j.at("ranked").size(), 2u);
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const pf::SweepRow row{static_cast<int>(i) + 1, layout_text(ranked[i].layout), &ranked[i]};
    const nlohmann::ordered_json& entry = j.at("ranked").at(i);
    for (const auto& f : pf::kSweep) {
      if (!fields::in_json(f)) continue;
      const std::string key(f.key);
      const nlohmann::ordered_json& holder = entry.contains(key) ? entry : entry.at("predicted");
      ASSERT_TRUE(holder.contains(key)) << key;
      EXPECT_EQ(holder.at(key), fields::json_value(f, row)) << key;
    }
  }
}

}  // namespace
}  // namespace commprof
