// SPDX-License-Identifier: MIT
// The three outputs of `commprof bench` from a hand-built report: text tables, bench.json
// (schema commprof.bench v1) and bench.csv. Readers of these files rely on what is asserted here.
#include "collectives/bench/bench_report.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/bench/bench_fields.hpp"
#include "collectives/bench/bench_run_fields.hpp"

namespace commprof {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

BenchRow make_row(CollectiveKind op, int n, std::uint64_t bytes, double avg_us,
                  std::int64_t wrong) {
  const CollectiveSpec& spec = collective_spec(op);
  BenchRow row;
  row.op = op;
  row.nranks = n;
  row.busbw_factor = spec.busbw_factor(n);
  row.sizes = spec.sizes(bytes, DType::kFloat32, n);
  row.dtype = DType::kFloat32;
  row.root = spec.rooted ? 0 : -1;
  row.rank_time_us = std::vector<double>(static_cast<std::size_t>(n), avg_us);
  row.time_min_us = avg_us * 0.5;
  row.time_avg_us = avg_us;
  row.time_max_us = avg_us * 2;
  row.host_time_avg_us = avg_us * 1.1;
  row.algbw_gbps = algbw_gbps(row.sizes.bytes, row.time_avg_us);
  row.busbw_gbps = row.algbw_gbps * row.busbw_factor;
  row.algbw_max_gbps = algbw_gbps(row.sizes.bytes, row.time_max_us);
  row.busbw_max_gbps = row.algbw_max_gbps * row.busbw_factor;
  row.wrong = wrong;
  return row;
}

/// Four ranks on two hosts; allreduce at 1 KiB and 1 MiB, a broadcast, and an allgather row
/// that was not checked.
BenchReport sample_report() {
  BenchReport r;
  r.config.ops = {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast,
                  CollectiveKind::kAllGather};
  r.config.min_bytes = 1024;
  r.config.max_bytes = 1 << 20;
  r.config.iters = 7;
  r.config.warmup = 2;
  r.backend = "host";
  r.backend_reason = "requested";
  r.start_time = "2024-01-01T00:00:00Z";
  r.end_time = "2024-01-01T00:00:05Z";
  for (int i = 0; i < 4; ++i) r.ranks.push_back({i, i < 2 ? "node-a" : "node-b", i % 2, "cpu"});
  r.rows.push_back(make_row(CollectiveKind::kAllReduce, 4, 1024, 10.0, 0));
  r.rows.push_back(make_row(CollectiveKind::kAllReduce, 4, 1 << 20, 250.0, 0));
  r.rows.push_back(make_row(CollectiveKind::kBroadcast, 4, 1024, 8.0, 0));
  r.rows.push_back(make_row(CollectiveKind::kAllGather, 4, 1024, 9.0, -1));
  return r;
}

std::string text_of(const BenchReport& r) {
  std::ostringstream os;
  write_bench_text(os, r);
  return os.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

int count_matching(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  int n = 0;
  for (const auto& line : lines_of(text)) n += std::regex_search(line, re) ? 1 : 0;
  return n;
}

TEST(BenchText, OneTablePerOpWithFactorAndN) {
  const std::string text = text_of(sample_report());
  EXPECT_EQ(count_matching(text, "^# [a-z]+: n = 4, busbw factor "), 3);
  EXPECT_THAT(text, HasSubstr("# allreduce: n = 4, busbw factor 2(n-1)/n = 1.5000\n"));
  EXPECT_THAT(text, HasSubstr("# broadcast: n = 4, busbw factor 1 = 1.0000\n"));
  EXPECT_THAT(text, HasSubstr("# allgather: n = 4, busbw factor (n-1)/n = 0.7500\n"));
  EXPECT_THAT(text, ContainsRegex("backend host \\(requested\\), 4 ranks on 2 host\\(s\\)"));
  EXPECT_EQ(count_matching(text, "#wrong"), 3);
  EXPECT_EQ(count_matching(text, "^#   rank +[0-9]+  host node-[ab]  local [01]  device cpu$"), 4);
}

TEST(BenchText, RowsShowSizesTimesBandwidthsAndWrong) {
  const std::string text = text_of(sample_report());
  // size, count, type, redop, root, time min/avg/max, algbw, busbw, #wrong
  EXPECT_EQ(count_matching(text,
                           "^ +1024 +256 +float +sum +- +5\\.00 +10\\.00 +20\\.00 +0\\.10 "
                           "+0\\.15 +0$"),
            1);
  EXPECT_EQ(count_matching(text,
                           "^ +1048576 +262144 +float +sum +- +125\\.00 +250\\.00 "
                           "+500\\.00 +4\\.19 +6\\.29 +0$"),
            1);
  EXPECT_EQ(count_matching(text, "^ +1024 +256 +float +none +0 .* 0$"), 1);   // broadcast, root 0
  EXPECT_EQ(count_matching(text, "^ +1024 +64 +float +none +- .* N/A$"), 1);  // unchecked
}

TEST(BenchText, VerificationVerdict) {
  BenchReport r = sample_report();
  EXPECT_THAT(text_of(r), HasSubstr("# verification: 0 wrong elements (OK)\n"));
  r.rows[1].wrong = 3;
  EXPECT_THAT(text_of(r), HasSubstr("# verification: 3 wrong elements (FAILED)\n"));
  r.config.check = false;
  EXPECT_THAT(text_of(r), HasSubstr("# verification: off (--check 0)\n"));
  EXPECT_THAT(text_of(r), Not(HasSubstr("(OK)")));
}

TEST(BenchText, LongRankListsAreCut) {
  BenchReport r = sample_report();
  r.ranks.clear();
  for (int i = 0; i < 40; ++i) r.ranks.push_back({i, "h", 0, "cpu"});
  const std::string text = text_of(r);
  EXPECT_EQ(count_matching(text, "^#   rank "), 16);
  EXPECT_THAT(text, HasSubstr("... and 24 more ranks (see bench.json)"));
}

// The sweep hands rank 0's printer each row as its size is measured: the text then holds every
// row measured so far and no other, each op's table header before its first row, and its
// average after its last; once finished, it is the text of the finished report.
TEST(BenchText, EachRowIsPrintedWhenItsSizeIsMeasured) {
  const BenchReport done = sample_report();
  BenchReport live = done;
  live.rows.clear();
  std::ostringstream os;
  BenchTextPrinter printer(os);
  printer.started(live);
  EXPECT_EQ(count_matching(os.str(), "^ +[0-9]+ "), 0);
  EXPECT_EQ(count_matching(os.str(), "^#   rank "), 4);
  for (std::size_t i = 0; i < done.rows.size(); ++i) {
    live.rows.push_back(done.rows[i]);
    printer.measured(live, live.rows.back());
    const std::string text = os.str();
    EXPECT_EQ(count_matching(text, "^ +[0-9]+ +[0-9]+ +float "), static_cast<int>(i + 1)) << i;
    const std::vector<std::string> lines = lines_of(text);
    EXPECT_THAT(lines.back(), ContainsRegex("^ +" + std::to_string(done.rows[i].sizes.bytes) + " "))
        << i;
    if (i + 1 == done.rows.size() || done.rows[i + 1].op != done.rows[i].op) {
      printer.op_done(live, done.rows[i].op);
    }
  }
  // Tables: allreduce's two rows, broadcast's and allgather's one each, each closed.
  EXPECT_EQ(count_matching(os.str(), "^# [a-z]+: n = 4, busbw factor "), 3);
  EXPECT_EQ(count_matching(os.str(), "^# [a-z]+ average busbw over [12] sizes: "), 3);
  EXPECT_THAT(os.str(), Not(HasSubstr("# verification")));
  printer.finished(live);
  EXPECT_EQ(os.str(), text_of(done));
}

// A table's header comes with its first row, not before: an op whose sizes were all too small
// to divide among the ranks has none.
TEST(BenchText, AnOpWithoutRowsHasNoTable) {
  BenchReport live = sample_report();
  live.rows.clear();
  std::ostringstream os;
  BenchTextPrinter printer(os);
  printer.started(live);
  printer.op_done(live, CollectiveKind::kAllToAll);
  printer.finished(live);
  EXPECT_EQ(count_matching(os.str(), "busbw factor|average busbw"), 0);
  EXPECT_THAT(os.str(), HasSubstr("# verification: 0 wrong elements (OK)\n"));
}

TEST(BenchJson, SchemaVersionUnitsAndConfig) {
  const auto j = bench_to_json(sample_report());
  EXPECT_EQ(j["schema"], "commprof.bench");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["units"]["time"], "us");
  EXPECT_EQ(j["units"]["bandwidth"], "GB/s (1e9 bytes/s)");
  EXPECT_EQ(j["units"]["size"], "bytes");
  EXPECT_EQ(j["config"]["backend"], "host");
  EXPECT_EQ(j["config"]["ops"],
            nlohmann::ordered_json::array({"allreduce", "broadcast", "allgather"}));
  EXPECT_EQ(j["config"]["min_bytes"], 1024);
  EXPECT_EQ(j["config"]["max_bytes"], 1 << 20);
  EXPECT_EQ(j["config"]["iters"], 7);
  EXPECT_EQ(j["config"]["dtype"], "float");
  EXPECT_EQ(j["config"]["placement"], "out_of_place");
  ASSERT_EQ(j["ranks"].size(), 4u);
  EXPECT_EQ(j["ranks"][2]["rank"], 2);
  EXPECT_EQ(j["ranks"][2]["host"], "node-b");
  EXPECT_EQ(j["ranks"][3]["local_rank"], 1);
}

TEST(BenchJson, ResultsCarryBothBandwidthsAndTheFactor) {
  const BenchReport report = sample_report();
  const auto j = bench_to_json(report);
  ASSERT_EQ(j["results"].size(), report.rows.size());
  // Worked out by hand: 1 KiB in 10 µs is 0.1024 GB/s, 1 MiB in 250 µs 4.194304 GB/s (in 500 µs,
  // the maximum, half that); allreduce on 4 ranks moves 2(n−1)/n = 1.5 times that over the bus.
  const double want[2][4] = {{0.1024, 0.1536, 0.0512, 0.0768},
                             {4.194304, 6.291456, 2.097152, 3.145728}};
  for (int r = 0; r < 2; ++r) {
    const auto& item = j["results"][static_cast<std::size_t>(r)];
    EXPECT_DOUBLE_EQ(item["algbw_gbps"].get<double>(), want[r][0]);
    EXPECT_DOUBLE_EQ(item["busbw_gbps"].get<double>(), want[r][1]);
    EXPECT_DOUBLE_EQ(item["algbw_gbps_from_max"].get<double>(), want[r][2]);
    EXPECT_DOUBLE_EQ(item["busbw_gbps_from_max"].get<double>(), want[r][3]);
  }
  for (const auto& item : j["results"]) {
    SCOPED_TRACE(item.dump());
    EXPECT_LE(item["time_us"]["min"].get<double>(), item["time_us"]["avg"].get<double>());
    EXPECT_LE(item["time_us"]["avg"].get<double>(), item["time_us"]["max"].get<double>());
    EXPECT_EQ(item["nranks"], 4);
    EXPECT_EQ(item["rank_time_us"].size(), 4u);
  }
  const auto& ar = j["results"][1];
  EXPECT_EQ(ar["op"], "allreduce");
  EXPECT_EQ(ar["size_bytes"], 1 << 20);
  EXPECT_EQ(ar["count"], 262144);
  EXPECT_EQ(ar["busbw_factor_formula"], "2(n-1)/n");
  EXPECT_DOUBLE_EQ(ar["busbw_factor"].get<double>(), 1.5);
  EXPECT_EQ(ar["redop"], "sum");
  EXPECT_EQ(ar["root"], -1);
  EXPECT_EQ(ar["wrong"], 0);
  const auto& ag = j["results"][3];
  EXPECT_EQ(ag["send_count"], 64);
  EXPECT_EQ(ag["recv_count"], 256);
  EXPECT_TRUE(ag["wrong"].is_null()) << "an unchecked row must not claim 0 wrong";
  EXPECT_EQ(j["verification"]["checked"], true);
  EXPECT_EQ(j["verification"]["wrong"], 0);
}

TEST(BenchJson, RoundTripsThroughText) {
  const auto j = bench_to_json(sample_report());
  const auto back = nlohmann::json::parse(j.dump(1));
  EXPECT_EQ(back["results"].size(), 4u);
  EXPECT_EQ(back["schema"], "commprof.bench");
}

// An alltoallv row: 2 ranks, 64 B per rank in 1 us, the busiest rank moving 48 B off-rank
// (factor 0.75), ranks receiving 96 B and 32 B (imbalance 1.5). Its table names the busbw's
// basis and the routing, and carries both per size; JSON and CSV carry them too.
TEST(BenchAlltoallv, RowsShowTheFactorAndTheImbalanceAndSayWhatBusbwCounts) {
  BenchReport r = sample_report();
  r.config.ops = {CollectiveKind::kAllToAllV};
  r.config.routing = parse_routing("zipf:1.5");
  r.config.moe.experts = 8;
  r.config.moe.top_k = 2;
  r.rows.clear();
  BenchRow row = make_row(CollectiveKind::kAllToAllV, 2, 64, 1.0, 0);
  row.busbw_factor = 0.75;
  row.busbw_gbps = row.algbw_gbps * row.busbw_factor;
  row.imbalance = 1.5;
  row.busiest_bytes = 48;
  r.rows.push_back(row);
  const std::string text = text_of(r);
  EXPECT_THAT(text, HasSubstr("# alltoallv: n = 2, busbw factor max_r off-rank bytes / S per "
                              "size (factor column)\n"));
  EXPECT_THAT(text, HasSubstr("#   routing zipf:1.5, 8 experts, top-2, 1 element(s) per token, "
                              "step 0 layer 0; size = bytes every rank sends\n"));
  EXPECT_THAT(text, HasSubstr("busbw: busiest rank: the most bytes any rank sends to, or "
                              "receives from, other ranks, / avg time"));
  // algbw 64 B / 1 us = 0.064 GB/s, busbw 0.048 GB/s: 0.06 and 0.05 at two decimals.
  EXPECT_EQ(
      count_matching(text, "^ +64 +16 +float +none +- .* 0\\.06 +0\\.05 +0\\.7500 +1\\.500 +0$"), 1)
      << text;
  const auto j = bench_to_json(r);
  EXPECT_EQ(j["config"]["alltoallv"]["routing"], "zipf:1.5");
  EXPECT_EQ(j["config"]["alltoallv"]["experts"], 8);
  EXPECT_EQ(j["results"][0]["busiest_offrank_bytes"], 48);
  EXPECT_EQ(j["results"][0]["imbalance_max_over_mean"], 1.5);
  EXPECT_EQ(j["results"][0]["busbw_factor"], 0.75);
  std::ostringstream csv;
  write_bench_csv(csv, r);
  EXPECT_THAT(lines_of(csv.str()).at(1), ::testing::EndsWith(",0.750000,1.500000,0"));
  // Other ops' JSON has no alltoallv configuration.
  EXPECT_FALSE(bench_to_json(sample_report())["config"].contains("alltoallv"));
}

TEST(BenchCsv, HeaderAndOneRowPerResult) {
  std::ostringstream os;
  write_bench_csv(os, sample_report());
  const auto lines = lines_of(os.str());
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0],
            "op,nranks,size_bytes,count,dtype,redop,root,time_min_us,time_avg_us,time_max_us,"
            "host_clock_time_avg_us,algbw_gbps,busbw_gbps,algbw_gbps_from_max,"
            "busbw_gbps_from_max,busbw_factor,imbalance,wrong");
  // imbalance: alltoallv's alone, empty for the others.
  const std::regex row(
      "^[a-z]+,4,[0-9]+,[0-9]+,float,(sum|none),-?[0-9]+(,[0-9]+\\.[0-9]+){9},,[0-9]*$");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_TRUE(std::regex_match(lines[i], row)) << lines[i];
  }
  EXPECT_EQ(lines[2].rfind("allreduce,4,1048576,262144,float,sum,-1,125.000,250.000,500.000,", 0),
            0u)
      << lines[2];
  EXPECT_THAT(lines[2], ::testing::EndsWith(",1.500000,,0"));
  EXPECT_THAT(lines[4], ::testing::EndsWith(",0.750000,,"));  // unchecked: empty, not 0
}

// Every column of the rows' table (bench_fields.hpp) but the JSON-only ones is a CSV column, in
// order, and every one with a width a text header, in order: a column added there reaches both.
TEST(BenchColumns, EveryColumnReachesTheCsvAndTheText) {
  const BenchReport r = sample_report();
  std::ostringstream csv;
  write_bench_csv(csv, r);
  std::string header, text_names = "#", text_units = "#";
  std::size_t cells = 0;
  for (const bench_fields::Column& c : bench_fields::kColumns) {
    if (bench_fields::in_csv(c)) {
      header += (header.empty() ? "" : ",") + std::string(c.field.key);
      ++cells;
    }
    if (bench_fields::in_text(c, r.rows.front())) {
      text_names += " +" + std::string(c.field.label);
      if (!c.unit_line.empty()) {
        text_units += std::string(" +\\(") +
                      std::string(c.unit_line.substr(1, c.unit_line.size() - 2)) + "\\)";
      }
    }
  }
  const auto lines = lines_of(csv.str());
  EXPECT_EQ(lines.front(), header);
  for (const std::string& line : lines) {
    EXPECT_EQ(static_cast<std::size_t>(std::count(line.begin(), line.end(), ',')) + 1, cells)
        << line;
  }
  const std::string text = text_of(r);
  EXPECT_TRUE(std::regex_search(text, std::regex("\n" + text_names + "\n"))) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex("\n" + text_units + " *\n"))) << text;
}

// A run whose options give every member bench.json has: per-call stamps with their cost
// (--instrument activity), the library's estimate, and an alltoallv row beside the others.
BenchReport report_with_every_member() {
  BenchReport r = sample_report();
  r.config.instrument = Instrument::kActivity;
  r.config.estimate = true;
  r.cost_model = "nccl";
  r.config.ops.push_back(CollectiveKind::kAllToAllV);
  BenchRow v = make_row(CollectiveKind::kAllToAllV, 4, 4096, 12.0, 0);
  v.imbalance = 1.25;
  v.busiest_bytes = 3000;
  v.estimate_us = 11.5;
  v.iter_min_us = 3;
  v.iter_max_us = 9;
  v.plain_time_us = 10;
  v.instrumented_time_us = 11;
  r.rows.push_back(v);
  return r;
}

// bench.json walks the same table: each result holds exactly the table's members (a column
// added there reaches it; a member written by hand beside the table fails here), each with the
// column's value, and every column reaches some result of a run that asks for all of them.
TEST(BenchColumns, EveryColumnReachesTheJson) {
  const BenchReport r = report_with_every_member();
  const auto results = bench_to_json(r)["results"];
  ASSERT_EQ(results.size(), r.rows.size());
  std::set<std::string> shown;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const BenchRow& row = r.rows[i];
    const auto& result = results[i];
    std::set<std::string> expected;  // its top-level members
    for (const bench_fields::Column& c : bench_fields::kColumns) {
      if (bench_fields::in_json(c, r.config, row) != bench_fields::InJson::kYes) continue;
      const std::string name(bench_fields::json_name(c));
      const std::string object(c.json_object);
      expected.insert(object.empty() ? name : object);
      shown.insert(std::string(c.field.key));
      const auto& holder = object.empty() ? result : result.at(object);
      ASSERT_TRUE(holder.contains(name)) << c.field.key << " in result " << i;
      if (c.json == nullptr) {
        EXPECT_EQ(holder.at(name), fields::json_value(c.field, row)) << c.field.key;
      }
    }
    std::set<std::string> members;
    for (const auto& m : result.items()) members.insert(m.key());
    EXPECT_EQ(members, expected) << "result " << i;
  }
  for (const bench_fields::Column& c : bench_fields::kColumns) {
    EXPECT_EQ(shown.count(std::string(c.field.key)), 1u) << c.field.key << " reached no result";
  }
  // Values the table gives by a function of its own: the ranks' list, the cost ratio.
  EXPECT_EQ(results[4]["rank_time_us"], nlohmann::ordered_json(r.rows[4].rank_time_us));
  EXPECT_DOUBLE_EQ(results[4]["instrumentation"]["ratio"].get<double>(), 1.1);
  EXPECT_EQ(results[0]["single_call_us"]["max"], 0.0);
  // Without per-call stamps the single-call object is null; without --estimate, no estimate.
  BenchReport plain = sample_report();
  const auto first = bench_to_json(plain)["results"][0];
  EXPECT_TRUE(first.at("single_call_us").is_null());
  EXPECT_FALSE(first.contains("estimate_us"));
  EXPECT_FALSE(first.contains("instrumentation"));
  EXPECT_FALSE(first.contains("imbalance_max_over_mean"));
}

// bench.json's "config" walks the run's settings table (bench_run_fields.hpp): it holds exactly
// the table's members, each with the setting's value (a member written by hand beside the table
// fails here), the routing's in "alltoallv"; and each setting the text header names is in its
// line, in its words.
TEST(BenchRunSettings, EverySettingReachesTheJsonAndItsHeaderLine) {
  BenchReport r = sample_report();
  r.config.ops.push_back(CollectiveKind::kAllToAllV);
  r.config.routing = parse_routing("zipf:1.5");
  r.config.moe.experts = 8;
  r.config.moe.top_k = 2;
  r.config.moe.step = 3;
  r.config.moe.layer = 1;
  r.config.step_factor = 16;
  r.config.check = false;
  r.rows.push_back(make_row(CollectiveKind::kAllToAllV, 4, 64, 1.0, 0));
  const auto config = bench_to_json(r)["config"];
  std::set<std::string> top, routed, want_top, want_routed;
  for (const auto& m : config.items()) top.insert(m.key());
  for (const auto& m : config.at("alltoallv").items()) routed.insert(m.key());
  for (const bench_run_fields::Setting& s : bench_run_fields::kSettings) {
    const std::string key(s.field.key);
    (s.json_object.empty() ? want_top : want_routed).insert(key);
    const auto& holder = s.json_object.empty() ? config : config.at("alltoallv");
    ASSERT_TRUE(holder.contains(key)) << key;
    if (s.json == nullptr) {
      EXPECT_EQ(holder.at(key), fields::json_value(s.field, r)) << key;
    }
  }
  want_top.insert("alltoallv");
  EXPECT_EQ(top, want_top);
  EXPECT_EQ(routed, want_routed);
  EXPECT_EQ(config["step_factor"], 16);
  EXPECT_EQ(config["check"], false);
  EXPECT_EQ(config["alltoallv"]["routing"], "zipf:1.5");
  EXPECT_EQ(config["alltoallv"]["step"], 3);
  EXPECT_EQ(config["alltoallv"]["layer"], 1);
  // The text: the settings line and the alltoallv table's routing line.
  const std::string text = text_of(r);
  EXPECT_THAT(text, HasSubstr("\n# sizes 1024..1048576 B by x16, iters 7, warmup 2, dtype float, "
                              "check off, out-of-place\n"));
  int shown = 0;
  for (const bench_run_fields::Setting& s : bench_run_fields::kSettings) {
    if (s.line == bench_run_fields::Line::kNone) continue;
    ++shown;
    EXPECT_THAT(text, HasSubstr(s.field.text(r))) << s.field.key;
  }
  EXPECT_EQ(shown, 11);
}

}  // namespace
}  // namespace commprof
