// SPDX-License-Identifier: MIT
// The streaming reader (stream_rank_file + Reducer::add_file, what `commprof report` uses) against
// the full-timeline path (read_rank_file + Reducer::add): the same report, byte for byte, on
// synthetic runs; the same problems, word for word, on broken files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/reducer.hpp"
#include "analysis/report/report_writers.hpp"
#include "analysis/tools/synthetic_timeline.hpp"
#include "src/timeline/rank_file.hpp"
#include "support/temp_dir.hpp"

namespace commprof {
namespace {

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  const std::string dir = test::own_temp_path(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

SyntheticSpec spec16() {
  SyntheticSpec spec;
  spec.world_size = 16;
  spec.steps = 5;
  spec.warmup_steps = 2;
  spec.layers = 6;
  spec.tp_size = 4;
  spec.ranks_per_host = 4;  // 4 hosts: clock offsets are applied
  spec.skew_ns = 137;
  return spec;
}

std::vector<std::string> write_run(const std::string& dir, const SyntheticSpec& spec) {
  std::vector<std::string> files;
  for (int r = 0; r < spec.world_size; ++r) {
    files.push_back(write_rank_file(dir, make_synthetic_rank(spec, r)));
  }
  return files;
}

// The full-timeline path, as reduce_rank_files was before streaming.
Report reduce_whole(const std::vector<std::string>& files, const ReduceOptions& options) {
  Reducer reducer(options);
  for (const std::string& f : files) {
    RankTimeline t;
    try {
      t = read_rank_file(f);
    } catch (const std::exception& e) {
      reducer.add_problem(f, e.what());
      continue;
    }
    reducer.add(t, f);
  }
  Report r = reducer.finish();
  r.inputs = files;
  return r;
}

std::string all_formats(const Report& r) {
  std::ostringstream os;
  write_report_json(os, r);
  write_report_text(os, r);
  write_report_csv(os, r);
  write_report_html(os, r);  // with the per-step trend from every rank's step points
  return os.str();
}

TEST(ReducerFastPath, SameReportAsTheFullTimelinePath) {
  const std::string dir = fresh_dir("fast_path_same");
  const std::vector<std::string> files = write_run(dir, spec16());
  ReduceOptions options;
  options.peak_busbw_gbps = 100;
  const Report fast = reduce_rank_files(files, options);
  const Report whole = reduce_whole(files, options);
  // With an observer, reduce_rank_files itself takes the full-timeline path.
  int observed = 0;
  const Report observer =
      reduce_rank_files(files, options, [&](const RankTimeline&) { ++observed; });
  EXPECT_EQ(observed, 16);
  ASSERT_FALSE(fast.instances.empty());
  ASSERT_EQ(fast.ranks[5].step_points.size(), 7u);  // 2 warm-up + 5 measured
  EXPECT_TRUE(fast.ranks[5].step_points[0].warmup);
  EXPECT_EQ(all_formats(fast), all_formats(whole));
  EXPECT_EQ(all_formats(fast), all_formats(observer));
}

// Rank files written as zstd frames (--rank-file-format zstd) reduce to the report of the same
// files as JSON, but for the files' names (JSON and CSV compared); a directory stands for them as
// for rank-<R>.json.
TEST(ReducerFastPath, ZstdFilesGiveTheSameReportAsJsonFiles) {
  const std::string plain_dir = fresh_dir("fast_path_plain");
  const std::string zstd_dir = fresh_dir("fast_path_zstd");
  const SyntheticSpec spec = spec16();
  for (int r = 0; r < spec.world_size; ++r) {
    const RankTimeline t = make_synthetic_rank(spec, r);
    write_rank_file(plain_dir, t);
    write_rank_file(zstd_dir, t, RankFileFormat::kZstd);
  }
  const std::vector<std::string> zstd_files = expand_rank_inputs({zstd_dir});
  ASSERT_EQ(zstd_files.size(), 16u);
  EXPECT_EQ(zstd_files[10], zstd_dir + "/rank-10.json.zst");
  ReduceOptions options;
  const Report packed = reduce_rank_files(zstd_files, options);
  const Report whole = reduce_whole(zstd_files, options);
  const Report plain = reduce_rank_files(expand_rank_inputs({plain_dir}), options);
  ASSERT_TRUE(packed.problems.empty());
  // JSON and CSV: the text tables' columns widen with the longer file names.
  auto json_csv = [](const Report& r) {
    std::ostringstream os;
    write_report_json(os, r);
    write_report_csv(os, r);
    return os.str();
  };
  std::string expected = json_csv(plain);
  std::string got = json_csv(packed);
  auto unname = [](std::string text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
      text.replace(at, from.size(), to);
    }
    return text;
  };
  got = unname(unname(got, zstd_dir, "DIR"), ".json.zst", ".json");
  expected = unname(expected, plain_dir, "DIR");
  EXPECT_EQ(got, expected);
  EXPECT_EQ(all_formats(packed), all_formats(whole));
}

TEST(ReducerFastPath, FilesNotInCompactFormAreReadTheOtherWay) {
  // Pretty-printed with escapes and non-ASCII names: the compact reader declines, simdjson reads.
  const std::string dir = fresh_dir("fast_path_pretty");
  SyntheticSpec spec = spec16();
  spec.world_size = 4;
  std::vector<std::string> compact = write_run(fresh_dir("fast_path_compact"), spec);
  std::vector<std::string> pretty;
  for (int r = 0; r < spec.world_size; ++r) {
    RankTimeline t = make_synthetic_rank(spec, r);
    t.steps[1].ops[0].name = "fwd \"ü\"\\l0";
    for (StepRecord& s : t.steps) s.ops[1].name = "copy\tl0";
    std::ostringstream os;
    write_rank_json(os, t);
    const std::string path = dir + "/rank-" + std::to_string(r) + ".json";
    std::ofstream(path) << nlohmann::json::parse(os.str()).dump(2);
    pretty.push_back(path);
  }
  EXPECT_EQ(all_formats(reduce_rank_files(pretty, {})), all_formats(reduce_whole(pretty, {})));
}

TEST(ReducerFastPath, BrokenFilesGiveTheSameProblemsAndContributeNothing) {
  const std::string dir = fresh_dir("fast_path_broken");
  SyntheticSpec spec = spec16();
  spec.world_size = 7;
  std::vector<std::string> files = write_run(dir, spec);
  std::ostringstream os;
  write_rank_json(os, make_synthetic_rank(spec, 1));
  const std::string text = os.str();
  const std::size_t last_line = text.rfind('\n', text.size() - 2) + 1;
  auto damage = [&](int rank, const std::string& from, const std::string& to) {
    std::string t = text;
    const std::size_t at = t.find(from, t.size() / 2);  // deep inside the steps
    ASSERT_NE(at, std::string::npos) << from;
    ASSERT_LT(at, last_line) << "damage in the last line would read as a torn record";
    t.replace(at, from.size(), to);
    std::ofstream(files[static_cast<std::size_t>(rank)]) << t;
  };
  damage(1, "\"category\":\"COMP\"", "\"category\":\"GPU\"");
  damage(2, "\"end_ns\":", "\"end_ns\":-");
  damage(3, "\"seq\":", "\"seq\":1.5,\"x\":");
  damage(4, "\"start_ns\":", "");
  { std::ofstream(files[5]) << text.substr(0, text.find('\n') / 2); }  // cut in the header
  {
    // Cut in its last step's line, as a rank killed while appending leaves it: read (with a
    // warning) without that step, on both paths alike.
    std::ostringstream torn;
    write_rank_json(torn, make_synthetic_rank(spec, 6));
    const std::string t = torn.str();
    std::ofstream(files[6]) << t.substr(0, t.size() - 100);
  }
  files.push_back(files[0]);               // a second rank 0
  files.push_back(dir + "/rank-99.json");  // missing
  const Report fast = reduce_rank_files(files, {});
  const Report whole = reduce_whole(files, {});
  ASSERT_EQ(fast.problems.size(), 7u);
  for (std::size_t i = 0; i < fast.problems.size(); ++i) {
    EXPECT_EQ(fast.problems[i].file, whole.problems[i].file);
    EXPECT_EQ(fast.problems[i].message, whole.problems[i].message);
  }
  EXPECT_THAT(fast.problems[0].message, ::testing::HasSubstr("steps["));
  ASSERT_EQ(fast.ranks.size(), 2u);
  EXPECT_EQ(fast.ranks[1].rank, 6);
  EXPECT_EQ(fast.ranks[1].steps + 1, fast.ranks[0].steps);
  EXPECT_EQ(all_formats(fast), all_formats(whole));
}

TEST(ReducerFastPath, StreamDeliversEveryStep) {
  const std::string dir = fresh_dir("fast_path_stream");
  SyntheticSpec spec = spec16();
  spec.world_size = 2;
  const RankTimeline t = make_synthetic_rank(spec, 1);
  const std::string path = write_rank_file(dir, t);
  struct Sink : RankStepSink {
    RankTimeline got;
    int ends = 0;
    int restarts = 0;
    void header(const RankTimeline& h) override { got = h; }
    void step(const StepView& s) override { got.steps.push_back(to_step_record(s)); }
    void restart() override {
      got = RankTimeline{};
      ++restarts;
    }
    void end() override { ++ends; }
  } sink;
  stream_rank_file(path, sink);
  EXPECT_EQ(sink.ends, 1);
  EXPECT_EQ(sink.restarts, 0);  // read by the compact reader, never handed over to simdjson
  std::ostringstream a;
  std::ostringstream b;
  write_rank_json(a, sink.got);
  write_rank_json(b, t);
  EXPECT_EQ(a.str(), b.str());
}

}  // namespace
}  // namespace commprof
