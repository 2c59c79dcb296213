// SPDX-License-Identifier: MIT
// The compressed rank file (src/timeline/zstd_frames.hpp): the same timeline as the JSON file
// from both readers, the JSON text back from its frames, far fewer bytes; the appender's file
// after every step what the writer writes; and a file cut anywhere in its last step's frame, or
// overwritten part-way by an append, read without that step.
#include "src/timeline/zstd_frames.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/tools/synthetic_timeline.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/timeline/rank_file.hpp"
#include "src/timeline/rank_file_appender.hpp"
#include "support/temp_dir.hpp"
#include "support/test_files.hpp"

namespace commprof {
namespace {

using ::testing::HasSubstr;

void spill(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string zstd_dir(const std::string& name) { return test::fresh_temp_dir("zstd-" + name); }

std::string json_of(const RankTimeline& t) {
  std::ostringstream os;
  write_rank_json(os, t);
  return os.str();
}

// What stream_rank_file delivers, as a timeline.
class Collect final : public RankStepSink {
 public:
  void header(const RankTimeline& h) override { timeline = h; }
  void step(const StepView& s) override { timeline.steps.push_back(to_step_record(s)); }
  void end() override {}
  void restart() override { timeline = RankTimeline{}; }
  RankTimeline timeline;
};

RankTimeline streamed(const std::string& path) {
  Collect sink;
  stream_rank_file(path, sink);
  return sink.timeline;
}

// The whole file through libzstd's own streaming decoder, frame after frame (what `zstd -dc`
// does), not through the product's frame reader; "" where libzstd finds an error.
std::string zstd_decompressed(const std::string& packed) {
  ZSTD_DCtx* d = ZSTD_createDCtx();
  std::string out;
  std::string chunk(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer in{packed.data(), packed.size(), 0};
  std::size_t last = 0;  // 0 where the last frame ended whole
  while (in.pos < in.size) {
    ZSTD_outBuffer o{chunk.data(), chunk.size(), 0};
    last = ZSTD_decompressStream(d, &o, &in);
    if (ZSTD_isError(last)) {
      ZSTD_freeDCtx(d);
      return "";
    }
    out.append(chunk.data(), o.pos);
  }
  ZSTD_freeDCtx(d);
  return last == 0 ? out : "";
}

// Quiet: the torn files below are read with a warning each.
class ZstdRankFile : public testing::Test {
 protected:
  void SetUp() override { log::set_level(log::Level::kError); }
  void TearDown() override { log::set_level(log::Level::kInfo); }
};

TEST_F(ZstdRankFile, SameTimelineAsTheJsonFileFromBothReaders) {
  const RankTimeline t = make_synthetic_rank(SyntheticSpec::sized(6, 1, 4), 3);
  const std::string dir = zstd_dir("same");
  const std::string plain = write_rank_file(dir, t);
  const std::string packed = write_rank_file(dir, t, RankFileFormat::kZstd);
  EXPECT_EQ(packed, dir + "/rank-3.json.zst");
  const std::string expected = json_of(read_rank_file(plain));
  EXPECT_EQ(json_of(read_rank_file(packed)), expected);
  EXPECT_EQ(json_of(streamed(packed)), expected);
  // Its frames hold the JSON file's text, byte for byte: libzstd's own decoder (`zstd -d`) gives
  // the file back, and so does the product's frame reader.
  EXPECT_EQ(zstd_decompressed(test::file_bytes(packed)), test::file_bytes(plain));
  std::string text;
  read_zstd_frames(test::file_bytes(packed), packed, text);
  EXPECT_EQ(text, test::file_bytes(plain));
  EXPECT_LT(test::file_bytes(packed).size() * 4, text.size())
      << "not a quarter of the JSON file's bytes";
}

TEST_F(ZstdRankFile, TheAppendersFileIsAfterEveryStepWhatTheWriterWrites) {
  const RankTimeline t = make_synthetic_rank(SyntheticSpec::sized(4, 1, 2), 1);
  const std::string dir = zstd_dir("append");
  const std::string whole_dir = zstd_dir("append-whole");
  RankFileAppender file(dir, t, RankFileFormat::kZstd);
  EXPECT_EQ(file.path(), dir + "/rank-1.json.zst");
  RankTimeline so_far = t;
  so_far.steps.clear();
  for (const StepRecord& s : t.steps) {
    file.append(s);
    so_far.steps.push_back(s);
    ASSERT_EQ(test::file_bytes(file.path()),
              test::file_bytes(write_rank_file(whole_dir, so_far, RankFileFormat::kZstd)))
        << "after step " << s.index;
  }
  file.close();
  EXPECT_EQ(json_of(read_rank_file(file.path())), json_of(t));
}

// Every cut of the file from the start of its last step's frame on: the steps before it are
// read (all of them once the cut leaves the step's frame whole), by both readers.
TEST_F(ZstdRankFile, CutAnywhereInTheLastStepReadsTheStepsBefore) {
  const RankTimeline t = make_synthetic_rank(SyntheticSpec::sized(3, 1, 2), 0);
  const std::string dir = zstd_dir("cut");
  const std::string bytes = test::file_bytes(write_rank_file(dir, t, RankFileFormat::kZstd));
  const std::size_t end_frame = zstd_frame(kRankFileEnd).size();
  const std::size_t last_step = bytes.size() - end_frame - [&] {
    std::string line;
    append_step_line(line, t.steps.back(), false, t.rank);
    return zstd_frame(line).size();
  }();
  RankTimeline before = t;
  before.steps.pop_back();
  const std::string cut = dir + "/cut.json.zst";
  for (std::size_t n = last_step; n < bytes.size(); ++n) {
    spill(cut, bytes.substr(0, n));
    const std::string want = json_of(n < bytes.size() - end_frame ? before : t);
    ASSERT_EQ(json_of(read_rank_file(cut)), want) << "cut at " << n << " of " << bytes.size();
    ASSERT_EQ(json_of(streamed(cut)), want) << "cut at " << n << " of " << bytes.size();
  }
}

// An append stopped part-way: the new step's frame began over the old end frame, whose
// remaining bytes follow it; the step is lost unless its frame was written whole.
TEST_F(ZstdRankFile, AnAppendStoppedPartWayLosesOnlyThatStep) {
  const RankTimeline t = make_synthetic_rank(SyntheticSpec::sized(3, 1, 2), 2);
  RankTimeline before = t;
  before.steps.pop_back();
  const std::string dir = zstd_dir("torn-append");
  std::string bytes = test::file_bytes(write_rank_file(dir, before, RankFileFormat::kZstd));
  const std::size_t end_at = bytes.size() - zstd_frame(kRankFileEnd).size();
  std::string line;
  append_step_line(line, t.steps.back(), false, t.rank);
  const std::string step_frame = zstd_frame(line);
  const std::string append = step_frame + zstd_frame(kRankFileEnd);
  const std::string torn = dir + "/torn.json.zst";
  // Stopped within the step's frame: the step is lost; after it: the step is kept.
  for (std::size_t written : {std::size_t{1}, std::size_t{5}, step_frame.size() / 2,
                              step_frame.size() - 1, step_frame.size() + 1, append.size() - 1}) {
    std::string file = bytes;
    file.replace(end_at, std::min(written, file.size() - end_at), append.substr(0, written));
    spill(torn, file);
    const std::string want = json_of(written < step_frame.size() ? before : t);
    ASSERT_EQ(json_of(read_rank_file(torn)), want) << written << " bytes written";
    ASSERT_EQ(json_of(streamed(torn)), want) << written << " bytes written";
  }
}

TEST_F(ZstdRankFile, AFileWhoseFirstFrameIsCutIsAnErrorNamingIt) {
  const RankTimeline t = make_synthetic_rank(SyntheticSpec::sized(2, 0, 2), 0);
  const std::string dir = zstd_dir("head-cut");
  const std::string bytes = test::file_bytes(write_rank_file(dir, t, RankFileFormat::kZstd));
  const std::string cut = dir + "/rank-0.json.zst";
  spill(cut, bytes.substr(0, 12));
  try {
    read_rank_file(cut);
    ADD_FAILURE() << "read a file without its header";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(cut));
    EXPECT_THAT(e.what(), HasSubstr("first frame"));
  }
  EXPECT_THROW(streamed(cut), Error);
}

TEST(RankFileFormat, ByName) {
  EXPECT_EQ(parse_rank_file_format("json"), RankFileFormat::kJson);
  EXPECT_EQ(parse_rank_file_format("zstd"), RankFileFormat::kZstd);
  EXPECT_THROW(parse_rank_file_format("gzip"), ConfigError);
}

}  // namespace
}  // namespace commprof
