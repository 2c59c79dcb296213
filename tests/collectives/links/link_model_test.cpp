// SPDX-License-Identifier: MIT
// The link model's fit against exact points of a known latency and bandwidth, its predictions
// worked out by hand, and its file: written, read back, and bad files refused by name.
#include "collectives/links/link_model.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "collectives/links/link_fields.hpp"

#include "src/core/errors.hpp"

namespace commprof {
namespace {

// time_us = 5 µs × steps + S × factor / (20 GB/s × 1e3): all-reduce on 2 and 4 ranks.
std::vector<LinkSample> exact_allreduce(double latency_us, double busbw_gbps) {
  std::vector<LinkSample> out;
  for (const int n : {2, 4}) {
    for (std::uint64_t bytes = 1024; bytes <= (16u << 20); bytes *= 4) {
      LinkSample p;
      p.collective = CollectiveKind::kAllReduce;
      p.ranks = n;
      p.bytes = bytes;
      const double factor = 2.0 * (n - 1) / n;
      p.time_us =
          latency_us * 2 * (n - 1) + static_cast<double>(bytes) * factor / (busbw_gbps * 1e3);
      out.push_back(p);
    }
  }
  return out;
}

TEST(LinkModel, FitRecoversLatencyAndBandwidthFromExactPoints) {
  const LinkModel m = fit_link_model(exact_allreduce(5.0, 20.0), "synthetic");
  ASSERT_EQ(m.fits.size(), 1u);
  const LinkFit& f = m.fits.front();
  EXPECT_NEAR(f.latency_us, 5.0, 1e-9);
  EXPECT_NEAR(f.busbw_gbps, 20.0, 1e-9);
  EXPECT_EQ(f.points, 16);  // 8 sizes, 1 KiB .. 16 MiB by 4, on 2 and 4 ranks
  EXPECT_EQ(f.ranks, (std::vector<int>{2, 4}));
  EXPECT_NEAR(f.rms_rel_error, 0.0, 1e-12);
  // 8 ranks, 1 MiB: 14 steps of 5 µs + 1048576 × 1.75 / 20000 µs = 70 + 91.75 µs.
  EXPECT_NEAR(f.time_us(1u << 20, 8), 70.0 + 1048576 * 1.75 / 20000, 1e-6);
}

// A network dimension's one figure over every collective it carries (export-chakra's network
// file): exact all-reduces and all-gathers of one latency and bandwidth pooled give them back;
// fitted apart, the link model gives the same for each.
TEST(LinkModel, APooledFitOverSeveralCollectivesRecoversTheirLink) {
  std::vector<LinkSample> pooled = exact_allreduce(3.0, 40.0);
  for (const int n : {2, 4}) {
    for (const std::uint64_t bytes : {4096u, 1u << 20}) {
      LinkSample p;
      p.collective = CollectiveKind::kAllGather;
      p.ranks = n;
      p.bytes = bytes;
      // n−1 steps; busbw factor (n−1)/n.
      p.time_us = 3.0 * (n - 1) + static_cast<double>(bytes) * (n - 1) / n / (40.0 * 1e3);
      pooled.push_back(p);
    }
  }
  const LinkFit f = fit_pooled_link(pooled);
  EXPECT_EQ(f.collective, CollectiveKind::kAllReduce);  // the first sample's
  EXPECT_NEAR(f.latency_us, 3.0, 1e-9);
  EXPECT_NEAR(f.busbw_gbps, 40.0, 1e-9);
  EXPECT_EQ(f.points, 20);
  EXPECT_EQ(f.ranks, (std::vector<int>{2, 4}));
  const LinkModel apart = fit_link_model(pooled, "apart");
  ASSERT_EQ(apart.fits.size(), 2u);
  for (const LinkFit& g : apart.fits)
    EXPECT_NEAR(g.busbw_gbps, 40.0, 1e-9) << link_collective_name(g.collective);
  EXPECT_THROW(fit_pooled_link({}), ConfigError);
}

TEST(LinkModel, StepsAndFactorsFollowTheRing) {
  EXPECT_EQ(link_steps(CollectiveKind::kAllReduce, 8), 14);
  EXPECT_EQ(link_steps(CollectiveKind::kAllGather, 8), 7);
  EXPECT_EQ(link_steps(CollectiveKind::kReduceScatter, 4), 3);
  EXPECT_EQ(link_steps(CollectiveKind::kSendRecv, 8), 1);
  EXPECT_DOUBLE_EQ(link_bus_factor(CollectiveKind::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(link_bus_factor(CollectiveKind::kSendRecv, 4), 1.0);
  // A recorded name's kind: every point-to-point spelling is the model's transfer ("p2p").
  for (const char* p2p : {"send", "recv", "sendrecv", "p2p"}) {
    EXPECT_EQ(link_collective(p2p), CollectiveKind::kSendRecv) << p2p;
  }
  EXPECT_EQ(link_collective("all_gather"), CollectiveKind::kAllGather);
  EXPECT_STREQ(link_collective_name(CollectiveKind::kSendRecv), "p2p");
  EXPECT_STREQ(link_collective_name(CollectiveKind::kReduceScatter), "reducescatter");
  EXPECT_EQ(link_collective("allscatter"), std::nullopt);
  EXPECT_THROW(parse_link_collective("allscatter"), ConfigError);
}

TEST(LinkModel, OneSizeOnOneCommunicatorKeepsTheBandwidth) {
  // Every point 1 MiB on 2 ranks: latency and bandwidth cannot be told apart; the fit is all
  // bandwidth and gives the measured time back.
  LinkSample p{CollectiveKind::kAllReduce, LinkClass::kIntraNode, "dp", 2, 1u << 20, 100.0};
  const LinkModel m = fit_link_model({p, p}, "one size");
  ASSERT_EQ(m.fits.size(), 1u);
  EXPECT_EQ(m.fits[0].latency_us, 0.0);
  EXPECT_NEAR(m.fits[0].time_us(1u << 20, 2), 100.0, 1e-9);
}

TEST(LinkModel, FitsPerCollectiveLinkAndGroupAndFindsFallbacks) {
  std::vector<LinkSample> s = exact_allreduce(5.0, 20.0);
  for (LinkSample p : exact_allreduce(10.0, 5.0)) {
    p.link = LinkClass::kInterNode;
    s.push_back(p);
  }
  s.push_back({CollectiveKind::kSendRecv, LinkClass::kIntraNode, "pp", 2, 4096, 8.0});
  s.push_back({CollectiveKind::kSendRecv, LinkClass::kIntraNode, "pp", 2, 1u << 20, 60.0});
  const LinkModel m = fit_link_model(s, "mixed");
  ASSERT_EQ(m.fits.size(), 3u);
  std::string why;
  const LinkFit* inter = m.find(CollectiveKind::kAllReduce, LinkClass::kInterNode, "dp", &why);
  ASSERT_NE(inter, nullptr);
  EXPECT_NEAR(inter->busbw_gbps, 5.0, 1e-9);
  EXPECT_EQ(why, "");
  // p2p across nodes was never measured: the intra-node fit, said so.
  const LinkFit* p2p = m.find(CollectiveKind::kSendRecv, LinkClass::kInterNode, "pp", &why);
  ASSERT_NE(p2p, nullptr);
  EXPECT_NE(why.find("from the intra_node fit"), std::string::npos) << why;
  // p2p: 2 exact points, 1 step: 8 = a + 4096/(B·1e3), 60 = a + 1048576/(B·1e3).
  const double inv = (60.0 - 8.0) / (1048576.0 - 4096.0);
  EXPECT_NEAR(p2p->busbw_gbps, 1.0 / (inv * 1e3), 1e-9);
  EXPECT_NEAR(p2p->latency_us, 8.0 - 4096.0 * inv, 1e-9);
  EXPECT_EQ(m.find(CollectiveKind::kAllToAll, LinkClass::kIntraNode, ""), nullptr);
}

TEST(LinkModel, RefusesEmptyAndNonPositiveTimes) {
  EXPECT_THROW(fit_link_model({}, "none"), ConfigError);
  try {
    fit_link_model({{CollectiveKind::kAllReduce, LinkClass::kIntraNode, "", 2, 1024, 0.0}}, "zero");
    FAIL() << "a zero time was fitted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("times must be positive"), std::string::npos);
  }
}

TEST(LinkModel, MergeReplacesTheSamePoint) {
  std::vector<LinkSample> base = {
      {CollectiveKind::kAllReduce, LinkClass::kIntraNode, "", 2, 1024, 10.0},
      {CollectiveKind::kAllReduce, LinkClass::kIntraNode, "", 4, 1024, 20.0}};
  const auto merged =
      merge_samples(base, {{CollectiveKind::kAllReduce, LinkClass::kIntraNode, "", 2, 1024, 12.0}});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].ranks, 4);
  EXPECT_EQ(merged[1].time_us, 12.0);
}

class LinkFile : public ::testing::Test {
 protected:
  std::string path_ = (std::filesystem::temp_directory_path() /
                       ("commprof-links-" + std::to_string(::getpid()) + ".json"))
                          .string();
  void TearDown() override { std::filesystem::remove(path_); }
  void write(const std::string& text) { std::ofstream(path_) << text; }
  std::string error_of() {
    try {
      read_link_model(path_);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(LinkFile, WrittenAndReadBack) {
  const LinkModel m = fit_link_model(exact_allreduce(5.0, 20.0), "synthetic");
  write_link_model(path_, m);
  const LinkModel back = read_link_model(path_);
  EXPECT_EQ(back.source, "synthetic");
  ASSERT_EQ(back.fits.size(), 1u);
  EXPECT_NEAR(back.fits[0].latency_us, 5.0, 1e-9);
  EXPECT_NEAR(back.fits[0].busbw_gbps, 20.0, 1e-9);
  EXPECT_EQ(back.samples.size(), m.samples.size());
}

// The keys of a file table (link_fields.hpp), in order.
template <class Table>
std::vector<std::string> keys_of_table(const Table& table) {
  std::vector<std::string> keys;
  std::apply([&](const auto&... f) { (keys.emplace_back(f.key), ...); }, table);
  return keys;
}
std::vector<std::string> keys_of(const nlohmann::ordered_json& object) {
  std::vector<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.push_back(it.key());
  return keys;
}
// Every field of `table` equal in `a` and `b`.
template <class Row, class Table>
void expect_same_fields(const Row& a, const Row& b, const Table& table) {
  auto same = [&](const auto& f) { EXPECT_EQ(a.*f.member, b.*f.member) << f.key; };
  std::apply([&](const auto&... f) { (same(f), ...); }, table);
}

TEST_F(LinkFile, EveryFieldOfTheTablesWrittenAndReadBack) {
  LinkModel m;
  m.source = "by hand";
  LinkFit f;
  f.collective = CollectiveKind::kAllGather;
  f.link = LinkClass::kInterNode;
  f.group = "dp";
  f.latency_us = 2.5;
  f.busbw_gbps = 40.0;
  f.points = 7;
  f.rms_rel_error = 0.125;
  f.ranks = {2, 4};
  f.min_bytes = 1024;
  f.max_bytes = 1u << 20;
  m.fits = {f};
  m.samples = {{CollectiveKind::kSendRecv, LinkClass::kInterNode, "pp", 2, 4096, 3.5}};
  write_link_model(path_, m);
  std::ifstream in(path_);
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(in);
  EXPECT_EQ(keys_of(j.at("fits").at(0)), keys_of_table(link_fields::kFit));
  EXPECT_EQ(keys_of(j.at("samples").at(0)), keys_of_table(link_fields::kSample));
  EXPECT_EQ(j.at("fits").at(0).at("link"), "inter_node");
  const LinkModel back = read_link_model(path_);
  ASSERT_EQ(back.fits.size(), 1u);
  ASSERT_EQ(back.samples.size(), 1u);
  expect_same_fields(back.fits[0], f, link_fields::kFit);
  expect_same_fields(back.samples[0], m.samples[0], link_fields::kSample);
}

TEST_F(LinkFile, BadFilesNameWhatIsWrong) {
  write("{not json");
  EXPECT_NE(error_of().find("is not JSON"), std::string::npos);
  write(R"({"schema": "commprof.rank", "version": 1, "fits": []})");
  EXPECT_NE(error_of().find("schema 'commprof.rank', expected 'commprof.links'"),
            std::string::npos);
  write(R"({"schema": "commprof.links", "version": 2, "fits": []})");
  EXPECT_NE(error_of().find("version 2"), std::string::npos);
  write(R"({"schema": "commprof.links", "version": 1, "fits": [{"collective": "allreduce",
          "link": "intra_node", "latency_us": "fast", "busbw_gbps": 1}]})");
  EXPECT_NE(error_of().find("fits[0]: \"latency_us\" has the wrong type"), std::string::npos)
      << error_of();
  write(R"({"schema": "commprof.links", "version": 1, "fits": [{"collective": "allreduce",
          "link": "rack", "latency_us": 1, "busbw_gbps": 1}]})");
  EXPECT_NE(error_of().find("unknown link class 'rack'"), std::string::npos) << error_of();
  write(R"({"schema": "commprof.links", "version": 1, "fits": [{"collective": "allreduce",
          "link": "intra_node", "latency_us": -1, "busbw_gbps": 1}]})");
  EXPECT_NE(error_of().find("neither may be negative"), std::string::npos) << error_of();
  write(R"({"schema": "commprof.links", "version": 1, "fits": []})");
  EXPECT_NE(error_of().find("\"fits\" is empty"), std::string::npos);
  write(R"({"schema": "commprof.links", "version": 1, "fits": [{"collective": "allscatter",
          "link": "intra_node", "latency_us": 1, "busbw_gbps": 1}]})");
  EXPECT_NE(error_of().find("fits[0]: the link model knows no collective 'allscatter'"),
            std::string::npos)
      << error_of();
  // A missing required field is named once, with where it is missing.
  write(R"({"schema": "commprof.links", "version": 1, "fits": [{"collective": "allreduce",
          "latency_us": 1, "busbw_gbps": 1}]})");
  EXPECT_EQ(error_of(), std::string("link model '") + path_ + "', fits[0]: no \"link\"");
  // An optional field of the wrong type is named too, not read as its default.
  write(R"({"schema": "commprof.links", "version": 1, "fits": [{"collective": "allreduce",
          "link": "intra_node", "latency_us": 1, "busbw_gbps": 1, "points": "many"}]})");
  EXPECT_NE(error_of().find("fits[0]: \"points\" has the wrong type (\"many\")"), std::string::npos)
      << error_of();
  std::filesystem::remove(path_);
  EXPECT_NE(error_of().find("cannot read link model"), std::string::npos);
}

}  // namespace
}  // namespace commprof
