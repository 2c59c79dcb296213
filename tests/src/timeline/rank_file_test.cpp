// SPDX-License-Identifier: MIT
// Rank files: what the writer writes the reader reads back exactly; bad input is named.
#include "src/timeline/rank_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/tools/synthetic_timeline.hpp"
#include "src/core/errors.hpp"
#include "support/temp_dir.hpp"
#include "tests/support/temp_dir.hpp"

namespace commprof {
namespace {

// `t` written as a rank file into a fresh TempDir()/<name> and read back by the one-pass reader
// (stream_rank_file): its header and steps, as the readers' checks compare them.
RankTimeline rank_file_streamed_back(const RankTimeline& t, const std::string& name) {
  const std::string dir = test::own_temp_path(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  struct Keep : RankStepSink {
    RankTimeline t;
    void header(const RankTimeline& h) override { t = h; }
    void step(const StepView& s) override { t.steps.push_back(to_step_record(s)); }
    void end() override {}
    void restart() override { t.steps.clear(); }
  } sink;
  stream_rank_file(write_rank_file(dir, t), sink);
  return sink.t;
}

using ::testing::HasSubstr;

std::string to_json(const RankTimeline& t) {
  std::ostringstream os;
  write_rank_json(os, t);
  return os.str();
}

std::string error_of(const std::string& text) {
  try {
    parse_rank_json(text, "rank-9.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(RankFile, RoundTripsEveryField) {
  SyntheticSpec spec;
  spec.world_size = 16;
  spec.tp_size = 4;
  RankTimeline t = make_synthetic_rank(spec, 9);
  t.config = JsonObject::parse(R"({"workload":"dp","steps":3})");
  t.steps[1].ops[0].name = "odd \"name\" \\ with\ttab";
  t.steps[1].ops[0].flops = 1.5e12;
  const RankTimeline back = parse_rank_json(to_json(t), "x");
  EXPECT_EQ(back.rank, 9);
  EXPECT_EQ(back.world_size, 16);
  EXPECT_EQ(back.host, "node1");
  EXPECT_EQ(back.clock_offset_ns, 1000000);
  EXPECT_EQ(back.config, t.config);
  EXPECT_EQ(back.config.dump(), R"({"workload":"dp","steps":3})");
  ASSERT_EQ(back.steps.size(), t.steps.size());
  for (std::size_t s = 0; s < t.steps.size(); ++s) {
    EXPECT_EQ(back.steps[s].warmup, t.steps[s].warmup);
    EXPECT_EQ(back.steps[s].start_ns, t.steps[s].start_ns);
    ASSERT_EQ(back.steps[s].ops.size(), t.steps[s].ops.size());
    for (std::size_t o = 0; o < t.steps[s].ops.size(); ++o) {
      const OpRecord& a = t.steps[s].ops[o];
      const OpRecord& b = back.steps[s].ops[o];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.category, b.category);
      EXPECT_EQ(a.stream, b.stream);
      EXPECT_EQ(a.collective, b.collective);
      EXPECT_EQ(a.comm, b.comm);
      EXPECT_EQ(a.comm_size, b.comm_size);
      EXPECT_EQ(a.seq, b.seq);
      EXPECT_EQ(a.bytes, b.bytes);
      EXPECT_EQ(a.flops, b.flops);
      EXPECT_EQ(a.start_ns, b.start_ns);
      EXPECT_EQ(a.end_ns, b.end_ns);
    }
  }
}

// What NCCL's profiler plugin knows of a collective: written only where known, read back by both
// readers, and absent (the defaults) everywhere else, so files of commprof's own runs are
// unchanged and files of earlier writers still read.
TEST(RankFile, OptionalCollectiveFieldsOnlyWhereKnown) {
  RankTimeline t = make_synthetic_rank(SyntheticSpec::sized(1, 0, 1), 0);
  ASSERT_GE(t.steps.at(0).ops.size(), 2u);
  OpRecord& known = t.steps[0].ops[1];
  known.dtype = "ncclBfloat16";
  known.count = 524288;
  known.algo = "RING";
  known.proto = "LL128";
  known.channels = 24;
  known.enqueue_ns = known.start_ns - 7000;
  known.graph = true;
  known.in_place = 0;        // out of place is known, and written
  known.recv_bytes = 98304;  // an all-to-all(v)'s received bytes
  const std::string text = to_json(t);
  EXPECT_THAT(text, HasSubstr(R"("dtype":"ncclBfloat16","count":524288,"algo":"RING",)"
                              R"("proto":"LL128","channels":24,"enqueue_ns":)"));
  EXPECT_THAT(text, HasSubstr(R"("graph":true,"in_place":0,"recv_bytes":98304})"));
  const std::size_t first_op = text.find("{\"name\":");
  const std::string first = text.substr(first_op, text.find('}', first_op) - first_op);
  for (const char* key : {"dtype", "count", "algo", "proto", "channels", "enqueue_ns", "graph",
                          "in_place", "recv_bytes"}) {
    EXPECT_EQ(first.find(key), std::string::npos) << key << " written for an op that has none";
  }

  const auto check = [&](const StepRecord& step, const char* reader) {
    ASSERT_EQ(step.ops.size(), t.steps[0].ops.size()) << reader;
    const OpRecord& b = step.ops[1];
    EXPECT_EQ(b.dtype, "ncclBfloat16") << reader;
    EXPECT_EQ(b.count, 524288u) << reader;
    EXPECT_EQ(b.algo, "RING") << reader;
    EXPECT_EQ(b.proto, "LL128") << reader;
    EXPECT_EQ(b.channels, 24) << reader;
    EXPECT_EQ(b.enqueue_ns, known.start_ns - 7000) << reader;
    EXPECT_TRUE(b.graph) << reader;
    EXPECT_EQ(b.in_place, 0) << reader;
    EXPECT_EQ(b.recv_bytes, 98304u) << reader;
    const OpRecord& a = step.ops[0];
    EXPECT_TRUE(a.dtype.empty() && a.algo.empty() && a.proto.empty()) << reader;
    EXPECT_EQ(
        a.count + static_cast<std::uint64_t>(a.channels) + static_cast<std::uint64_t>(a.enqueue_ns),
        0u)
        << reader;
    EXPECT_FALSE(a.graph) << reader;
    EXPECT_EQ(a.in_place, -1) << reader;
    EXPECT_EQ(a.recv_bytes, 0u) << reader;
  };
  check(parse_rank_json(text, "x").steps.at(0), "complete reader");

  // The one-pass reader, through a file.
  const RankTimeline back = rank_file_streamed_back(t, "optional_fields");
  ASSERT_FALSE(back.steps.empty());
  check(back.steps[0], "one-pass reader");

  // A negative channel count or an enqueue time outside the clock's domain is refused.
  std::string bad = text;
  bad.replace(bad.find("\"channels\":24"), 13, "\"channels\":-1");
  EXPECT_THAT(error_of(bad), HasSubstr("channels is negative"));
}

// The executor's recorded waits and a transfer's peers: lists written only where known, read back
// by both readers; a negative index is refused.
TEST(RankFile, RecordedWaitsOnlyWhereAnOpWaited) {
  RankTimeline t = make_synthetic_rank(SyntheticSpec::sized(2, 0, 1), 0);
  ASSERT_GE(t.steps.at(1).ops.size(), 3u);
  t.steps[1].ops[2].after = {0, 1};
  t.steps[1].ops[1].send_to = {3};
  t.steps[1].ops[1].recv_from = {0, 2};
  const std::string text = to_json(t);
  EXPECT_THAT(text, HasSubstr(R"("after":[0,1]})"));
  EXPECT_EQ(text.find("\"after\""), text.rfind("\"after\"")) << "written for an op without";

  const auto check = [&](const RankTimeline& back, const char* reader) {
    ASSERT_EQ(back.steps.size(), 2u) << reader;
    EXPECT_EQ(back.steps[1].ops.at(2).after, (std::vector<std::int32_t>{0, 1})) << reader;
    EXPECT_TRUE(back.steps[1].ops[1].after.empty()) << reader;
    EXPECT_EQ(back.steps[1].ops[1].send_to, (std::vector<std::int32_t>{3})) << reader;
    EXPECT_EQ(back.steps[1].ops[1].recv_from, (std::vector<std::int32_t>{0, 2})) << reader;
    EXPECT_TRUE(back.steps[1].ops[2].send_to.empty()) << reader;
    EXPECT_TRUE(back.steps[0].ops[2].after.empty()) << reader;
  };
  check(parse_rank_json(text, "x"), "complete reader");
  check(rank_file_streamed_back(t, "recorded_waits"), "one-pass reader");

  std::string bad = text;
  bad.replace(bad.find("[0,1]"), 5, "[0,-1]");
  EXPECT_THAT(error_of(bad), HasSubstr("steps[1].ops[2]: after holds a negative index"));
  bad = text;
  bad.replace(bad.find("[0,1]"), 5, "[0,\"x\"]");
  EXPECT_THAT(error_of(bad), HasSubstr("steps[1].ops[2]: field 'after' has the wrong type"));
}

// An all-to-all(v)'s bytes per peer: two lists of bytes written only where known, read back by
// both readers (bytes above 2^32 too, which an index list could not hold); a negative or
// fractional count, or a list of strings, is refused.
TEST(RankFile, BytesPerPeerOnlyWhereKnown) {
  RankTimeline t = make_synthetic_rank(SyntheticSpec::sized(1, 0, 1), 0);
  ASSERT_GE(t.steps.at(0).ops.size(), 3u);
  const std::vector<std::uint64_t> sent = {4096, 0, 6000000000};
  const std::vector<std::uint64_t> received = {4096, 8192, 12288};
  t.steps[0].ops[1].peer_send_bytes = sent;
  t.steps[0].ops[1].peer_recv_bytes = received;
  const std::string text = to_json(t);
  EXPECT_THAT(text, HasSubstr(R"("peer_send_bytes":[4096,0,6000000000],)"
                              R"("peer_recv_bytes":[4096,8192,12288]})"));
  EXPECT_EQ(text.find("peer_send_bytes"), text.rfind("peer_send_bytes"))
      << "written for an op without";

  const auto check = [&](const std::vector<StepRecord>& steps, const char* reader) {
    ASSERT_EQ(steps.size(), 1u) << reader;
    EXPECT_EQ(steps[0].ops.at(1).peer_send_bytes, sent) << reader;
    EXPECT_EQ(steps[0].ops[1].peer_recv_bytes, received) << reader;
    EXPECT_TRUE(steps[0].ops[0].peer_send_bytes.empty()) << reader;
    EXPECT_TRUE(steps[0].ops[2].peer_recv_bytes.empty()) << reader;
  };
  check(parse_rank_json(text, "x").steps, "complete reader");
  check(rank_file_streamed_back(t, "peer_bytes").steps, "one-pass reader");

  for (const char* wrong : {"[4096,-8192,12288]", "[4096,8192.5,12288]", "[\"4096\"]"}) {
    std::string bad = text;
    bad.replace(bad.find("[4096,8192,12288]"), 17, wrong);
    EXPECT_THAT(error_of(bad), HasSubstr("peer_recv_bytes")) << wrong;
  }
}

// An op's own index in its communicator (beside its bytes per peer): written where known, rank 0
// included (its "not known" is -1, not 0), read back by both readers as written and as -1 where
// absent; outside [0, comm_size), or not an integer, refused.
TEST(RankFile, CommRankOnlyWhereKnown) {
  RankTimeline t = make_synthetic_rank(SyntheticSpec::sized(1, 0, 1), 0);
  ASSERT_GE(t.steps.at(0).ops.size(), 3u);
  for (OpRecord& op : t.steps[0].ops) op.comm_size = 3;
  t.steps[0].ops[1].comm_rank = 0;
  t.steps[0].ops[2].comm_rank = 2;
  const std::string text = to_json(t);
  EXPECT_THAT(text, HasSubstr(R"("comm_rank":0})"));
  EXPECT_THAT(text, HasSubstr(R"("comm_rank":2})"));
  EXPECT_EQ(text.find("comm_rank"), text.find(R"("comm_rank":0})") + 1)
      << "written for an op without";

  const auto check = [&](const std::vector<StepRecord>& steps, const char* reader) {
    ASSERT_EQ(steps.size(), 1u) << reader;
    EXPECT_EQ(steps[0].ops.at(0).comm_rank, -1) << reader;
    EXPECT_EQ(steps[0].ops.at(1).comm_rank, 0) << reader;
    EXPECT_EQ(steps[0].ops.at(2).comm_rank, 2) << reader;
  };
  check(parse_rank_json(text, "x").steps, "complete reader");
  check(rank_file_streamed_back(t, "comm_rank").steps, "one-pass reader");

  for (const char* wrong : {"3", "-2"}) {
    std::string bad = text;
    bad.replace(bad.find(R"("comm_rank":2)") + 12, 1, wrong);
    EXPECT_THAT(error_of(bad),
                HasSubstr("ops[2]: comm_rank is not within [0, comm_size) (nor -1: not known)"))
        << wrong;
  }
  std::string bad = text;
  bad.replace(bad.find(R"("comm_rank":2)") + 12, 1, "\"2\"");
  EXPECT_THAT(error_of(bad), HasSubstr("field 'comm_rank' has the wrong type")) << bad;
}

TEST(RankFile, UnknownFieldsAreSkipped) {
  const SyntheticSpec spec = SyntheticSpec::sized(1, 0, 1);
  std::string text = to_json(make_synthetic_rank(spec, 0));
  const std::string op_start = "{\"name\":";
  text.insert(text.find(op_start) + 1, "\"future\":{\"a\":[1,2]},");
  EXPECT_EQ(parse_rank_json(text, "x").steps[0].ops.size(), 3u);
}

// The one-pass reader reads an op's fields where the writer puts them, in the table's order,
// and any other op by the general loop: keys in another order, a field of a later writer, a
// list read before the op turned out to be another's shape. Both give what the complete
// reader gives.
TEST(RankFile, OpsOfAnotherShapeReadAsTheCompleteReaderReadsThem) {
  RankTimeline t = make_synthetic_rank(SyntheticSpec::sized(2, 0, 1), 0);
  ASSERT_GE(t.steps.at(1).ops.size(), 3u);
  t.steps[1].ops[0].after = {2};
  t.steps[1].ops[2].after = {0, 1};
  std::string text = to_json(t);
  const std::size_t step1 = text.find("{\"index\":1");
  ASSERT_NE(step1, std::string::npos);
  // Step 1, op 0: "name" after "category"; op 2: a later writer's field after its waits.
  const std::size_t name = text.find("{\"name\":", step1) + 1;
  const std::size_t category = text.find(",\"category\":", name);
  const std::size_t stream = text.find(",\"stream\":", category);
  const std::string name_field = text.substr(name, category - name);
  const std::string category_field = text.substr(category + 1, stream - category - 1);
  text.replace(name, stream - name, category_field + "," + name_field);
  const std::size_t waits = text.find("\"after\":[0,1]", step1);
  ASSERT_NE(waits, std::string::npos);
  text.insert(waits + 13, ",\"future\":{\"a\":[1,2]}");
  const RankTimeline complete = parse_rank_json(text, "x");
  ASSERT_EQ(complete.steps.at(1).ops.at(2).after, (std::vector<std::int32_t>{0, 1}));
  ASSERT_EQ(complete.steps[1].ops.at(0).after, (std::vector<std::int32_t>{2}));

  const std::string dir = test::own_temp_path("ops_of_another_shape");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/rank-0.json";
  std::ofstream(path) << text;
  struct Keep : RankStepSink {
    std::vector<StepRecord> steps;
    int deliveries = 0;
    void header(const RankTimeline&) override { ++deliveries; }
    void step(const StepView& s) override { steps.push_back(to_step_record(s)); }
    void end() override {}
    void restart() override { steps.clear(); }
  } sink;
  stream_rank_file(path, sink);
  EXPECT_EQ(sink.deliveries, 1) << "read in one pass, not handed to the complete reader";
  ASSERT_EQ(sink.steps.size(), complete.steps.size());
  for (std::size_t s = 0; s < sink.steps.size(); ++s) {
    ASSERT_EQ(sink.steps[s].ops.size(), complete.steps[s].ops.size());
    for (std::size_t i = 0; i < sink.steps[s].ops.size(); ++i) {
      const OpRecord& a = sink.steps[s].ops[i];
      const OpRecord& b = complete.steps[s].ops[i];
      EXPECT_EQ(a.name, b.name) << s << "/" << i;
      EXPECT_EQ(a.category, b.category) << s << "/" << i;
      EXPECT_EQ(a.start_ns, b.start_ns) << s << "/" << i;
      EXPECT_EQ(a.end_ns, b.end_ns) << s << "/" << i;
      EXPECT_EQ(a.after, b.after) << s << "/" << i;
    }
  }
}

TEST(RankFile, BadInputIsNamedWithFileAndPlace) {
  const SyntheticSpec spec = SyntheticSpec::sized(2, 0, 1);
  const std::string good = to_json(make_synthetic_rank(spec, 0));
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const auto at = t.rfind(from);  // the last op: steps[1].ops[2]
    return t.replace(at, from.size(), to);
  };
  EXPECT_THAT(error_of("not json"), HasSubstr("rank-9.json"));
  EXPECT_THAT(error_of("[1,2]"), HasSubstr("rank-9.json: top level is not a JSON object"));
  // Cut inside the header (a file cut inside a step is the torn case, tested below).
  EXPECT_THAT(error_of(good.substr(0, good.find('\n') / 2)), HasSubstr("rank-9.json"));
  EXPECT_THAT(error_of(replaced("\"category\":\"COMM\"", "\"category\":\"GPU\"")),
              HasSubstr("rank-9.json: steps[1].ops[2]: unknown category 'GPU'"));
  EXPECT_THAT(error_of(replaced("\"bytes\":1048576", "\"bytes\":\"big\"")),
              HasSubstr("steps[1].ops[2]: field 'bytes' has the wrong type (string"));
  // rank_file_reader_fuzz found the op reader looking at a key before the broken value beside it
  // had been refused (a null pointer read; UBSan in the asan preset).
  EXPECT_THAT(error_of(replaced("\"bytes\":1048576", "\"bytes\":10:48576")),
              HasSubstr("rank-9.json: steps[1].ops[2]: not valid JSON"));
  EXPECT_THAT(error_of(replaced(",\"seq\":1", "")),
              HasSubstr("steps[1].ops[2]: missing field 'seq'"));
  EXPECT_THAT(error_of(replaced("\"end_ns\":", "\"end_ns\":1,\"x\":")),
              HasSubstr("steps[1].ops[2]: end_ns is before start_ns"));
  std::string v2 = good;
  v2.replace(v2.find("\"version\":1"), 11, "\"version\":2");
  EXPECT_THAT(error_of(v2), HasSubstr("schema version 2 is not supported"));
  std::string other = good;
  other.replace(other.find("commprof.rank"), 13, "commprof.xxxx");
  EXPECT_THAT(error_of(other), HasSubstr("schema is 'commprof.xxxx'"));
  std::string bad_rank = good;
  bad_rank.replace(bad_rank.find("\"rank\":0"), 8, "\"rank\":7");
  EXPECT_THAT(error_of(bad_rank), HasSubstr("rank 7 is not within world_size 4"));
}

// tests/fuzz (interval_set_fuzz) found that times this far apart overflow an interval's length:
// the readers refuse any time outside +-kMaxTimeNs, naming the field.
TEST(RankFile, TimesOutsideTheDomainAreRefused) {
  const SyntheticSpec spec = SyntheticSpec::sized(1, 0, 1);
  const RankTimeline t = make_synthetic_rank(spec, 0);
  std::string text = to_json(t);
  const std::string start = "\"start_ns\":" + std::to_string(t.steps[0].ops[0].start_ns);
  text.replace(text.find(start, text.find("\"ops\":[")), start.size(),
               "\"start_ns\":-9223368824356206512");
  EXPECT_THAT(error_of(text),
              HasSubstr("rank-9.json: steps[0].ops[0]: field 'start_ns' is out of range "
                        "(-9223368824356206512; times are within +-2^60 ns)"));
  // A new first value of the field; the old one stays behind as the value of an unknown field.
  std::string offset = to_json(t);
  offset.replace(offset.find("\"clock_offset_ns\":"), 18,
                 "\"clock_offset_ns\":1152921504606846977,\"x\":");
  EXPECT_THAT(error_of(offset), HasSubstr("field 'clock_offset_ns' is out of range"));
  // The edge itself is a time.
  std::string edge = to_json(t);
  edge.replace(edge.find("\"clock_offset_ns\":"), 18,
               "\"clock_offset_ns\":-1152921504606846976,\"x\":");
  EXPECT_EQ(parse_rank_json(edge, "x").clock_offset_ns, -kMaxTimeNs);
}

// tests/fuzz (rank_file_reader_fuzz) found configs that are not JSON read as if they were, and
// writing such a timeline again then threw nlohmann's parse_error out of `commprof`.
TEST(RankFile, ConfigThatIsNotJsonIsRefused) {
  const SyntheticSpec spec = SyntheticSpec::sized(1, 0, 1);
  RankTimeline t = make_synthetic_rank(spec, 0);
  const std::string config = R"({"model":{"heads":4}})";
  t.config = JsonObject::parse(config);
  const std::string good = to_json(t);
  for (const std::string bad : {R"({"model":{"heas"d:4}})", R"({"model":{"heads":tru}})",
                                R"({"model":{"heads":01}})", R"({"model":[1,,2]})"}) {
    std::string text = good;
    text.replace(text.find(config), config.size(), bad);
    EXPECT_THAT(error_of(text), HasSubstr("rank-9.json: field 'config' is not valid JSON")) << bad;
  }
  EXPECT_EQ(parse_rank_json(good, "x").config, t.config);
  // rank_file_stream_fuzz then found a valid config refused: an integer beyond 64 bits is JSON.
  const std::string big =
      R"({"model":{"ffn":5444444444444444444444444444444444444412,"x":-0.5e-3}})";
  std::string text = good;
  text.replace(text.find(config), config.size(), big);
  EXPECT_EQ(parse_rank_json(text, "x").config, JsonObject::parse(big));
}

// The layout the readers rely on to find a torn record: the header, then one line per step.
TEST(RankFile, OneStepToALineAndThePiecesMakeTheWhole) {
  const SyntheticSpec spec = SyntheticSpec::sized(3, 1, 2);
  RankTimeline t = make_synthetic_rank(spec, 1);
  t.steps[1].ops[0].name = "a\nname with a newline";
  const std::string whole = to_json(t);
  EXPECT_EQ(std::count(whole.begin(), whole.end(), '\n'), 1 + 4 + 1);
  std::string pieces = rank_file_head(t);
  for (std::size_t i = 0; i < t.steps.size(); ++i) append_step_line(pieces, t.steps[i], i == 0, 1);
  pieces += kRankFileEnd;
  EXPECT_EQ(pieces, whole);
  EXPECT_EQ(parse_rank_json(whole, "x").steps[1].ops[0].name, t.steps[1].ops[0].name);
}

// What RankFileAppender leaves when its rank stops in the middle of appending a step: the file
// of the steps before, with a prefix of ",{step}\n]}\n" written over its closing "]}\n". Every
// such file reads (the torn line dropped) with the complete steps, by both readers.
TEST(RankFile, TornLastRecordIsDroppedByBothReaders) {
  const SyntheticSpec spec = SyntheticSpec::sized(3, 0, 1);
  const RankTimeline t = make_synthetic_rank(spec, 0);
  RankTimeline two = t;
  two.steps.resize(2);
  const std::string before = to_json(two);
  std::string record;
  append_step_line(record, t.steps[2], /*first=*/false, 0);
  record += kRankFileEnd;
  const std::size_t end = before.size() - kRankFileEnd.size();
  const std::string dir = test::own_temp_path("torn");
  std::filesystem::create_directories(dir);
  for (std::size_t k = 0; k < record.size(); ++k) {
    std::string text = before.substr(0, end) + record.substr(0, k);
    if (k < kRankFileEnd.size()) text += before.substr(end + k);
    // The step's own line is whole once its newline is written; the end may still be torn.
    const std::size_t expected = k >= record.size() - kRankFileEnd.size() ? 3 : 2;
    RankTimeline read;
    ASSERT_NO_THROW(read = parse_rank_json(text, "x")) << "cut at " << k;
    EXPECT_EQ(read.steps.size(), expected) << "cut at " << k;
    EXPECT_EQ(read.steps.back().start_ns, t.steps[expected - 1].start_ns);

    const std::string path = dir + "/rank-0.json";
    { std::ofstream(path, std::ios::binary) << text; }
    struct Count final : RankStepSink {
      void header(const RankTimeline&) override {}
      void step(const StepView&) override { ++steps; }
      void end() override {}
      void restart() override { steps = 0; }
      std::size_t steps = 0;
    } sink;
    ASSERT_NO_THROW(stream_rank_file(path, sink)) << "cut at " << k;
    EXPECT_EQ(sink.steps, expected) << "cut at " << k;
  }
}

// Only the last line may be torn: damage before it is an error, as it always was.
TEST(RankFile, DamageBeforeTheLastLineIsStillAnError) {
  const SyntheticSpec spec = SyntheticSpec::sized(3, 0, 1);
  const std::string good = to_json(make_synthetic_rank(spec, 0));
  std::string text = good;
  const std::size_t second_step = text.find("\n,{") + 1;
  text.replace(second_step + 5, 4, "xxxx");
  EXPECT_THAT(error_of(text), HasSubstr("rank-9.json"));
  // Torn last line and damage elsewhere: the first error is reported.
  EXPECT_THAT(error_of(text.substr(0, text.size() - 20)), HasSubstr("rank-9.json"));
}

TEST(RankFile, MissingFileIsNamed) {
  try {
    read_rank_file("/nonexistent/rank-3.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot read '/nonexistent/rank-3.json'"));
  }
}

TEST(RankFile, ADirectoryStandsForItsRankFilesInRankOrder) {
  const std::string dir = test::fresh_temp_dir("expand_inputs");
  // Both formats' names, ranks sorted as numbers (10 after 2); anything else is left out.
  for (const char* name : {"rank-10.json", "rank-2.json.zst", "rank-0.json", "rank-x.json",
                           "rank-3.json.tmp", "notes.txt", "rank-4.jsonl"}) {
    std::ofstream(dir + "/" + name) << "{}";
  }
  const std::vector<std::string> want = {dir + "/rank-0.json", dir + "/rank-2.json.zst",
                                         dir + "/rank-10.json", "/nonexistent/rank-7.json"};
  // A file stands for itself, even a missing one: the reader names it later.
  EXPECT_EQ(expand_rank_inputs({dir, "/nonexistent/rank-7.json"}), want);
}

TEST(RankFile, ADirectoryWithoutRankFilesIsNamed) {
  const std::string dir = test::fresh_temp_dir("expand_none");
  std::ofstream(dir + "/rank-1.txt") << "{}";
  try {
    expand_rank_inputs({dir});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "'" + dir + "' holds no rank-<R>.json files");
  }
}

}  // namespace
}  // namespace commprof
