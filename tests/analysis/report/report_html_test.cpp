// SPDX-License-Identifier: MIT
// The HTML report: which step and ranks its timeline draws (step_timelines.cpp), the data block
// its script draws from, worked out by hand for the three-rank synthetic run, the critical path
// on the timeline for a two-rank step worked out by hand, how 2,048 ranks fold (paged tables,
// the binned heatmap), and the escaping of text from files.
#include "analysis/report/step_timelines.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "analysis/graph/critical_report.hpp"
#include "analysis/reducer.hpp"
#include "analysis/report/report_writers.hpp"
#include "analysis/three_ranks.hpp"
#include "analysis/tools/synthetic_timeline.hpp"
#include "src/core/errors.hpp"
#include "support/hand_timelines.hpp"

namespace commprof {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

StepPoint point(int index, std::int64_t wall, std::int32_t ops, bool warmup = false) {
  StepPoint p;
  p.index = index;
  p.wall_ns = wall;
  p.ops = ops;
  p.warmup = warmup;
  return p;
}

TEST(StepTimelines, ChoosesTheSlowestStepThatCarriesOps) {
  Report r;
  for (int rank = 0; rank < 3; ++rank) {
    RankSummary s;
    s.rank = rank;
    // Step 0: warm-up, slowest of all; step 2: plain (no ops), slower than any timed step.
    s.step_points = {point(0, 900, 5, true), point(1, 100 + rank, 5), point(2, 800, 0),
                     point(3, rank == 1 ? 300 : 100, 5)};
    r.ranks.push_back(s);
  }
  EXPECT_EQ(choose_timeline_step(r, -1), 3);
  EXPECT_EQ(choose_timeline_step(r, 1), 1);
  try {
    choose_timeline_step(r, 2);
    ADD_FAILURE() << "a step without ops was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--timeline-step 2: no rank measured that step with per-op "
                                    "timing (steps with ops: 1, 3)"));
  }
  EXPECT_EQ(choose_timeline_step(Report{}, -1), -1);
}

TEST(StepTimelines, DrawsTheAlwaysRankThenSlowestAndFastestInTurn) {
  Report r;
  for (int rank = 0; rank < 10; ++rank) {
    RankSummary s;
    s.rank = rank;
    s.step_points = {point(4, rank == 7 ? 1000 : 100 + 10 * rank, 3)};
    r.ranks.push_back(s);
  }
  // Rank 3 always; then slowest 7, fastest 0, next slowest 9, next fastest 1; slowest first.
  EXPECT_EQ(choose_timeline_ranks(r, 4, 3, 5), (std::vector<int>{7, 9, 3, 1, 0}));
  EXPECT_EQ(choose_timeline_ranks(r, 4, 3, 1), (std::vector<int>{3}));
  EXPECT_EQ(choose_timeline_ranks(r, 4, 42, 2), (std::vector<int>{7, 0}));  // 42 was not read
  EXPECT_TRUE(choose_timeline_ranks(r, 5, 0, 4).empty());                   // nobody has step 5
}

using testing::three_ranks;

// The page's data block, parsed.
json data_of(const std::string& html) {
  const std::string open = "id='commprof-data'>";
  const auto begin = html.find(open);
  const auto end = html.find("</script>", begin);
  EXPECT_NE(begin, std::string::npos);
  return json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

// Row `row`'s value of `key` in table `name` of the data block ({"keys": [...], "rows": [...]}).
json cell(const json& data, const std::string& name, std::size_t row, const std::string& key) {
  const json& t = data.at("tables").at(name);
  const json& keys = t.at("keys");
  const auto at = std::find(keys.begin(), keys.end(), key);
  EXPECT_NE(at, keys.end()) << name << " has no " << key;
  return t.at("rows").at(row).at(static_cast<std::size_t>(at - keys.begin()));
}

std::string page(const std::vector<RankTimeline>& timelines, const TimelineOptions& options,
                 bool critical_path = false) {
  Reducer reducer({});
  for (const RankTimeline& t : timelines) reducer.add(t, "mem");
  Report report = reducer.finish();
  if (critical_path) {
    StepGraphBuilder graphs;
    for (const RankTimeline& t : timelines) graphs.add(t);
    add_critical_paths(report, graphs.finish());
  }
  load_step_timelines(report, options, [&](const RankSummary& s, int step) {
    for (const StepRecord& st : timelines[static_cast<std::size_t>(s.rank)].steps)
      if (st.index == step && !st.warmup) return std::optional<StepRecord>(st);
    return std::optional<StepRecord>();
  });
  std::ostringstream os;
  write_report_html(os, report);
  return os.str();
}

TEST(ReportHtml, DataBlockKnownAnswers) {
  std::vector<RankTimeline> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(make_synthetic_rank(three_ranks(), r));
  TimelineOptions options;
  options.ranks = 2;
  const json d = data_of(page(ranks, options));

  // Trend: one warm-up and two measured steps, every rank alike per step.
  ASSERT_EQ(d["trend"].size(), 3u);
  EXPECT_TRUE(d["trend"][0]["w"].get<bool>());
  EXPECT_FALSE(d["trend"][1]["w"].get<bool>());
  EXPECT_TRUE(d["trend"][1]["timed"].get<bool>());

  // Timeline: two ranks drawn (rank 0 always, and the slowest of the others), one folded.
  const json& tl = d["timeline"];
  ASSERT_EQ(tl["ranks"].size(), 2u);
  EXPECT_EQ(tl["folded"].size(), 1u);
  int rank0_lanes = 0;
  for (const json& r : tl["ranks"]) {
    ASSERT_EQ(r["lanes"].size(), 3u);  // COMP, COMM, MEM in that order
    EXPECT_EQ(r["lanes"][0]["s"], "COMP");
    EXPECT_EQ(r["lanes"][1]["s"], "COMM");
    EXPECT_EQ(r["lanes"][2]["s"], "MEM");
    for (const json& lane : r["lanes"]) EXPECT_EQ(lane["ops"].size(), 2u);  // two layers
    if (r["r"] == 0) ++rank0_lanes;
    // A collective carries its communicator and sequence number.
    const json& coll = r["lanes"][1]["ops"][0];
    EXPECT_EQ(tl["comms"][coll[5].get<std::size_t>()], "world");
    EXPECT_GE(coll[6].get<int>(), 0);
  }
  EXPECT_EQ(rank0_lanes, 1);
  EXPECT_EQ(tl["t0"], 0);

  // Heatmap: rank 2 arrives last at all 4 allreduces, 200 + 100 ns of others' wait each.
  const json& hm = d["heatmap"];
  EXPECT_EQ(hm["rows"], (json{0, 1, 2}));
  EXPECT_EQ(hm["instances"], 4);
  ASSERT_EQ(hm["bins"].size(), 4u);
  ASSERT_EQ(hm["cells"].size(), 4u);
  for (const json& c : hm["cells"]) {
    EXPECT_EQ(c[0], 2);  // row of rank 2
    EXPECT_EQ(c[2].get<double>(), 300.0);
  }
  EXPECT_EQ(hm["max"].get<double>(), 300.0);

  // The tables the charts draw from: per rank the step breakdown (rank 1 arrives 100 ns late,
  // so 13000 ns of COMM and 6500 hidden), one collective row of 2^20 B at 2^20 / 6400 × 4/3
  // GB/s (the bus bandwidth chart's point); no --peak-busbw.
  ASSERT_EQ(d["tables"]["ranks"]["rows"].size(), 3u);
  EXPECT_EQ(cell(d, "ranks", 1, "rank"), 1);
  EXPECT_EQ(cell(d, "ranks", 1, "host"), "node1");
  EXPECT_EQ(cell(d, "ranks", 1, "step_time_ns"), 26600.0);
  EXPECT_EQ(cell(d, "ranks", 1, "comm_busy_ns"), 13000.0);
  EXPECT_EQ(cell(d, "ranks", 1, "comm_comp_overlap_ns"), 6500.0);
  EXPECT_EQ(cell(d, "ranks", 1, "idle_ns"), 100.0);
  EXPECT_TRUE(cell(d, "ranks", 1, "plain_step_time_ns").is_null());  // every step timed
  ASSERT_EQ(d["tables"]["collectives"]["rows"].size(), 1u);
  EXPECT_EQ(cell(d, "collectives", 0, "collective"), "allreduce");
  EXPECT_EQ(cell(d, "collectives", 0, "comm_size"), 3);
  EXPECT_EQ(cell(d, "collectives", 0, "bytes"), 1048576);
  EXPECT_DOUBLE_EQ(cell(d, "collectives", 0, "busbw_gbps").get<double>(),
                   1048576.0 / 6400.0 * 4.0 / 3.0);
  EXPECT_TRUE(d["peak_busbw_gbps"].is_null());
}

// The step of tests/support/hand_timelines.hpp (every rank's step starts at 0):
//   rank 0: a COMP [0,10]  ar COMM [10,30] after a  b COMP [12,20]  c COMP [30,40] after ar
//   rank 1: a COMP [0,20]  ar COMM [20,30] after a  b COMP [20,28]  c COMP [31,36] after ar
// Its critical path: rank 1's a (20 ns), ar through rank 1, the last to arrive (10), rank 0's c
// (10). With rank 1's c at [31,45] instead, the path ends there: a, ar, the host gap before c
// (1), c (14), all on rank 1.
// Per drawn rank, the names of its ops the data block marks as on the critical path.
std::map<int, std::multiset<std::string>> outlined(const json& tl) {
  std::map<int, std::multiset<std::string>> out;
  for (const json& r : tl["ranks"]) {
    auto& names = out[r["r"].get<int>()];
    for (const json& lane : r["lanes"]) {
      for (const json& op : lane["ops"]) {
        if (op[7] == 1) names.insert(tl["names"][op[3].get<std::size_t>()].get<std::string>());
      }
    }
  }
  return out;
}

// [start, length, category (3: host gap), rank, op name] per segment.
std::vector<std::tuple<std::int64_t, std::int64_t, int, int, std::string>> segments(
    const json& tl) {
  std::vector<std::tuple<std::int64_t, std::int64_t, int, int, std::string>> out;
  for (const json& s : tl["path"]["segments"]) {
    out.emplace_back(s[0].get<std::int64_t>(), s[1].get<std::int64_t>(), s[2].get<int>(),
                     s[3].get<int>(), tl["names"][s[4].get<std::size_t>()].get<std::string>());
  }
  return out;
}

TEST(ReportHtml, CriticalPathOnTheTimeline) {
  using Segs = std::vector<std::tuple<std::int64_t, std::int64_t, int, int, std::string>>;
  {
    const json tl = data_of(page(test::two_rank_step(36), TimelineOptions{}, true))["timeline"];
    EXPECT_EQ(tl["step"], 3);
    EXPECT_EQ(segments(tl), (Segs{{0, 20, 0, 1, "a"}, {20, 10, 1, 1, "ar"}, {30, 10, 0, 0, "c"}}));
    EXPECT_EQ(tl["path"]["length"], 40);
    // Per rank [COMP, COMM, MEM, gap], most first.
    EXPECT_EQ(tl["path"]["shares"], (json{{1, 20, 10, 0, 0}, {0, 10, 0, 0, 0}}));
    // Rank 0's ar waited for rank 1's: only the last arrival's op is on the path.
    EXPECT_EQ(outlined(tl),
              (std::map<int, std::multiset<std::string>>{{0, {"c"}}, {1, {"a", "ar"}}}));
  }
  {
    const json tl = data_of(page(test::two_rank_step(45), TimelineOptions{}, true))["timeline"];
    EXPECT_EQ(
        segments(tl),
        (Segs{{0, 20, 0, 1, "a"}, {20, 10, 1, 1, "ar"}, {30, 1, 3, 1, "c"}, {31, 14, 0, 1, "c"}}));
    EXPECT_EQ(tl["path"]["length"], 45);
    EXPECT_EQ(tl["path"]["shares"], (json{{1, 34, 10, 0, 1}}));
    EXPECT_EQ(outlined(tl),
              (std::map<int, std::multiset<std::string>>{{0, {}}, {1, {"a", "ar", "c"}}}));
  }
  // Without the critical path (--no-critical-path), no lane and no outline.
  const json tl = data_of(page(test::two_rank_step(36), TimelineOptions{}))["timeline"];
  EXPECT_TRUE(tl["path"].is_null());
  EXPECT_EQ(outlined(tl), (std::map<int, std::multiset<std::string>>{{0, {}}, {1, {}}}));
}

// 2,048 ranks (one measured step of 4 layers, tensor-parallel groups of 8): the page folds
// them. Under 1,000 B a rank (16,384 ranks: under 20 MB, the bound); the
// per-rank tables are paged (100 rows as HTML, every row in the data block, slowest first); the
// heatmap's rows are groups of consecutive ranks that hold every rank exactly once, its cells
// the largest and the mean wait of their group's ranks (the means sum back to every wait
// caused); the timeline draws 16 ranks and folds the others.
TEST(ReportHtml, FoldsTwoThousandRanks) {
  SyntheticSpec spec;
  spec.world_size = 2048;
  spec.steps = 1;
  spec.layers = 4;
  spec.tp_size = 8;
  std::vector<RankTimeline> ranks;
  for (int r = 0; r < spec.world_size; ++r) ranks.push_back(make_synthetic_rank(spec, r));
  Reducer reducer({});
  for (const RankTimeline& t : ranks) reducer.add(t, "mem");
  const Report report = reducer.finish();
  const std::string html = page(ranks, TimelineOptions{}, true);
  EXPECT_LT(html.size(), 2048u * 1000u);
  const json d = data_of(html);

  // Tables: the per-rank ones paged.
  for (const char* name : {"ranks", "stragglers"}) {
    const json& t = d["tables"][name];
    EXPECT_EQ(t["rows"].size(), 2048u) << name;
    const std::string id = t["id"].get<std::string>();
    EXPECT_THAT(html, HasSubstr("id='" + id + "' data-table='" + name + "' data-rows='2048'>"));
    const auto begin = html.find("id='" + id + "'");
    const std::string table = html.substr(begin, html.find("</table>", begin) - begin);
    std::size_t rows = 0;
    for (auto at = table.find("<tr>"); at != std::string::npos; at = table.find("<tr>", at + 1))
      ++rows;
    EXPECT_EQ(rows, 1u + 100u) << name;  // the header and the first page
  }
  double slowest = 0;
  for (const RankSummary& s : report.ranks) slowest = std::max(slowest, s.wall_ns.mean);
  EXPECT_EQ(cell(d, "ranks", 0, "step_time_ns").get<double>(), slowest);

  // Heatmap: every rank once, in groups of at most ⌈2048 / 520⌉ = 4 consecutive rows.
  const json& hm = d["heatmap"];
  ASSERT_EQ(hm["rows"].size(), 2048u);
  std::set<int> all;
  for (const json& r : hm["rows"]) all.insert(r.get<int>());
  EXPECT_EQ(all.size(), 2048u);
  const json& groups = hm["groups"];
  ASSERT_EQ(groups.size(), 512u);
  std::vector<int> group_of(2048, -1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::size_t first = groups[g][0], last = groups[g][1];
    EXPECT_LE(first, last);
    EXPECT_LE(last - first + 1, 4u);
    for (std::size_t row = first; row <= last && row < 2048; ++row) {
      EXPECT_EQ(group_of[row], -1) << "row " << row << " in two groups";
      group_of[row] = static_cast<int>(g);
    }
  }
  EXPECT_EQ(std::count(group_of.begin(), group_of.end(), -1), 0);
  std::map<int, std::size_t> row_of;
  for (std::size_t i = 0; i < 2048; ++i) row_of[hm["rows"][i].get<int>()] = i;
  double caused = 0, binned = 0;
  for (const CollectiveInstance& c : report.instances)
    if (c.wait_caused_ns > 0) caused += static_cast<double>(c.wait_caused_ns);
  ASSERT_FALSE(hm["cells"].empty());
  for (const json& c : hm["cells"]) {
    const std::size_t g = c[0];
    ASSERT_LT(g, groups.size());
    EXPECT_LT(c[1].get<std::size_t>(), hm["bins"].size());
    const double max = c[2], mean = c[3];
    EXPECT_LE(mean, max);
    EXPECT_LE(max, hm["max"].get<double>());
    EXPECT_EQ(group_of.at(row_of.at(c[4].get<int>())), static_cast<int>(g));  // its worst rank
    binned += mean * static_cast<double>(groups[g][1].get<int>() - groups[g][0].get<int>() + 1);
  }
  EXPECT_NEAR(binned, caused, 1e-6 * caused);

  // Timeline: 16 drawn, the other 2,032 folded; the step's critical path on it.
  const json& tl = d["timeline"];
  EXPECT_EQ(tl["ranks"].size(), 16u);
  std::set<int> seen;
  for (const json& r : tl["ranks"]) seen.insert(r["r"].get<int>());
  for (const json& f : tl["folded"]) seen.insert(f[0].get<int>());
  EXPECT_EQ(seen.size(), 2048u);
  ASSERT_FALSE(tl["path"].is_null());
  std::int64_t on_ranks = 0;
  for (const json& s : tl["path"]["shares"])
    for (std::size_t k = 1; k <= 4; ++k) on_ranks += s[k].get<std::int64_t>();
  EXPECT_EQ(on_ranks, tl["path"]["length"].get<std::int64_t>());
}

TEST(ReportHtml, TablesAreSortableAndNamed) {
  std::vector<RankTimeline> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(make_synthetic_rank(three_ranks(), r));
  const std::string html = page(ranks, TimelineOptions{});
  for (const char* id : {"table-ranks", "table-across", "table-groups", "table-collectives",
                         "table-stragglers", "table-instances"}) {
    EXPECT_THAT(html, HasSubstr(std::string("<table class='sortable' id='") + id + "'>")) << id;
  }
  // Times in the unit that fits, with the raw value to sort by.
  EXPECT_THAT(html, HasSubstr("<td data-v='6400'>6.40 µs</td>"));
}

TEST(ReportHtml, EscapesTextFromFiles) {
  std::vector<RankTimeline> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(make_synthetic_rank(three_ranks(), r));
  ranks[0].host = "<script>alert(1)</script>";
  for (StepRecord& s : ranks[0].steps) s.ops[0].name = "fwd</script><&>\"'";
  const std::string html = page(ranks, TimelineOptions{});
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("fwd</script>"), std::string::npos);
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));  // in the tables
  // In the data block as \u escapes, which read back as the original text.
  const json d = data_of(html);
  const json& names = d["timeline"]["names"];
  EXPECT_NE(std::find(names.begin(), names.end(), "fwd</script><&>\"'"), names.end());
  EXPECT_EQ(cell(d, "ranks", 0, "host"), "<script>alert(1)</script>");
  // Nothing is fetched: the only URL is the SVG namespace the script creates elements in.
  std::size_t urls = 0;
  for (auto at = html.find("http"); at != std::string::npos; at = html.find("http", at + 1)) {
    EXPECT_EQ(html.compare(at, 26, "http://www.w3.org/2000/svg"), 0) << html.substr(at, 40);
    ++urls;
  }
  EXPECT_EQ(urls, 1u);
}

}  // namespace
}  // namespace commprof
