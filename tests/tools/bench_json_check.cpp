// SPDX-License-Identifier: MIT
// Checks the bench.json and bench.csv that an integration run of
//   commprof bench --backend host --ops all --min-bytes 1K --max-bytes 256K --out DIR
// wrote, as a downstream reader would: schema, verification, bandwidth accounting for the
// communicator size, and the ranks (the tests BenchOutput.*). SampledActivity.* checks instead the
// bench.json of
//   commprof bench --backend host --ops allreduce,sendrecv --min-bytes 1K --max-bytes 4K
//                  --instrument activity --out DIR
// Reads COMMPROF_BENCH_DIR and COMMPROF_BENCH_NRANKS (set by CTest, tests/collectives/
// CMakeLists.txt, which selects the tests for each run); the run is a FIXTURES_SETUP of this test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/test_files.hpp"

namespace {

using nlohmann::json;

const std::vector<std::string> kOps = {"allreduce",     "broadcast", "reduce",  "allgather",
                                       "reducescatter", "alltoall",  "sendrecv"};
const std::vector<std::uint64_t> kSizes = {1024, 4096, 16384, 65536, 262144};

class BenchOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = commprof::test::env("COMMPROF_BENCH_DIR");
    n_ = std::atoi(commprof::test::env("COMMPROF_BENCH_NRANKS").c_str());
    ASSERT_FALSE(dir_.empty()) << "COMMPROF_BENCH_DIR is not set";
    ASSERT_GT(n_, 0) << "COMMPROF_BENCH_NRANKS is not set";
    std::ifstream in(dir_ + "/bench.json");
    ASSERT_TRUE(in.good()) << "cannot read " << dir_ << "/bench.json";
    ASSERT_NO_THROW(j_ = json::parse(in)) << "bench.json is not valid JSON";
  }

  /// busbw/algbw written from the definitions in nccl-tests' PERFORMANCE.md, not from commprof.
  double factor(const std::string& op) const {
    const double n = n_;
    if (op == "allreduce") return 2 * (n - 1) / n;
    if (op == "allgather" || op == "reducescatter" || op == "alltoall") return (n - 1) / n;
    return 1.0;
  }

  std::string dir_;
  int n_ = 0;
  json j_;
};

TEST_F(BenchOutput, SchemaAndConfiguration) {
  EXPECT_EQ(j_.at("schema"), "commprof.bench");
  EXPECT_EQ(j_.at("version"), 1);
  EXPECT_EQ(j_.at("units").at("time"), "us");
  EXPECT_EQ(j_.at("config").at("backend"), "host");
  std::set<std::string> ops;
  for (const auto& op : j_.at("config").at("ops")) ops.insert(op.get<std::string>());
  EXPECT_EQ(ops, std::set<std::string>(kOps.begin(), kOps.end()));
  EXPECT_EQ(j_.at("config").at("min_bytes"), 1024);
  EXPECT_EQ(j_.at("config").at("max_bytes"), 262144);
  EXPECT_EQ(j_.at("config").at("check"), true);
  EXPECT_FALSE(j_.at("start_time").get<std::string>().empty());
}

TEST_F(BenchOutput, RanksListEveryRankWithItsHost) {
  const json& ranks = j_.at("ranks");
  ASSERT_EQ(ranks.size(), static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) {
    EXPECT_EQ(ranks[r].at("rank"), r);
    EXPECT_FALSE(ranks[r].at("host").get<std::string>().empty()) << "rank " << r;
    EXPECT_GE(ranks[r].at("local_rank").get<int>(), 0);
    EXPECT_EQ(ranks[r].at("device"), "cpu");
  }
}

TEST_F(BenchOutput, EveryOpAndSizeVerifiedWithoutErrors) {
  const json& results = j_.at("results");
  std::map<std::string, std::set<std::uint64_t>> seen;
  for (const auto& item : results) {
    SCOPED_TRACE(item.dump());
    ASSERT_TRUE(item.at("wrong").is_number_integer()) << "a result was not checked";
    EXPECT_EQ(item.at("wrong"), 0);
    seen[item.at("op").get<std::string>()].insert(item.at("size_bytes").get<std::uint64_t>());
  }
  EXPECT_EQ(results.size(), kOps.size() * kSizes.size());
  for (const auto& op : kOps) EXPECT_EQ(seen[op].size(), kSizes.size()) << op;
  EXPECT_EQ(j_.at("verification").at("checked"), true);
  EXPECT_EQ(j_.at("verification").at("wrong"), 0);
}

TEST_F(BenchOutput, BusbwOverAlgbwIsTheFactorForN) {
  for (const auto& item : j_.at("results")) {
    const std::string op = item.at("op");
    SCOPED_TRACE(op + " " + item.at("size_bytes").dump());
    EXPECT_EQ(item.at("nranks"), n_);
    EXPECT_NEAR(item.at("busbw_factor").get<double>(), factor(op), 1e-12);
    const double algbw = item.at("algbw_gbps");
    const double busbw = item.at("busbw_gbps");
    ASSERT_GT(algbw, 0.0);
    EXPECT_NEAR(busbw / algbw, factor(op), 1e-9);
    const double algbw_max = item.at("algbw_gbps_from_max");
    ASSERT_GT(algbw_max, 0.0);
    EXPECT_NEAR(item.at("busbw_gbps_from_max").get<double>() / algbw_max, factor(op), 1e-9);
    EXPECT_LE(algbw_max, algbw * (1 + 1e-12)) << "the max time cannot be faster than the mean";
    const json& t = item.at("time_us");
    EXPECT_GT(t.at("min").get<double>(), 0.0);
    EXPECT_LE(t.at("min").get<double>(), t.at("avg").get<double>());
    EXPECT_LE(t.at("avg").get<double>(), t.at("max").get<double>());
    EXPECT_EQ(item.at("rank_time_us").size(), static_cast<std::size_t>(n_));
    // algbw = size / avg time, in 1e9 B/s
    EXPECT_NEAR(algbw, item.at("size_bytes").get<double>() / t.at("avg").get<double>() / 1e3,
                algbw * 1e-9);
  }
}

TEST_F(BenchOutput, CsvHasAHeaderAndOneLinePerResult) {
  std::ifstream in(dir_ + "/bench.csv");
  ASSERT_TRUE(in.good()) << "cannot read " << dir_ << "/bench.csv";
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("op,nranks,size_bytes,count,", 0), 0u) << lines[0];
  EXPECT_EQ(lines.size(), 1 + j_.at("results").size());
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(
        lines[i].rfind(
            j_["results"][i - 1].at("op").get<std::string>() + "," + std::to_string(n_) + ",", 0),
        0u)
        << lines[i];
    EXPECT_EQ(lines[i].back(), '0') << "wrong column: " << lines[i];
  }
}

// Sampled activity timing: the reported loop runs unrecorded, one more loop per size records
// activities for the single-call times, and what recording cost is that loop's time against the
// reported one.
TEST(SampledActivity, EveryResultCarriesItsSingleCallTimesAndTheRecordingCost) {
  const std::string dir = commprof::test::env("COMMPROF_BENCH_DIR");
  ASSERT_FALSE(dir.empty()) << "COMMPROF_BENCH_DIR is not set";
  std::ifstream in(dir + "/bench.json");
  ASSERT_TRUE(in.good()) << "cannot read " << dir << "/bench.json";
  const json j = json::parse(in);
  EXPECT_EQ(j.at("config").at("instrument"), "activity");
  // allreduce and sendrecv at 1 KiB and 4 KiB: the command line's ops and sizes.
  std::set<std::pair<std::string, std::uint64_t>> seen;
  for (const json& item : j.at("results")) {
    SCOPED_TRACE(item.dump());
    seen.insert({item.at("op").get<std::string>(), item.at("size_bytes").get<std::uint64_t>()});
    const json& single = item.at("single_call_us");
    EXPECT_GT(single.at("min").get<double>(), 0.0);
    EXPECT_LE(single.at("min").get<double>(), single.at("max").get<double>());
    const json& cost = item.at("instrumentation");
    // The time reported is the unrecorded loop's.
    EXPECT_EQ(cost.at("plain_time_us").get<double>(), item.at("time_us").at("avg").get<double>());
    const double recorded = cost.at("instrumented_time_us").get<double>();
    EXPECT_GT(recorded, 0.0);
    // Invariant (the ratio's definition), not an independent oracle.
    EXPECT_NEAR(cost.at("ratio").get<double>(), recorded / cost.at("plain_time_us").get<double>(),
                1e-12 * recorded);
  }
  const std::set<std::pair<std::string, std::uint64_t>> want = {
      {"allreduce", 1024}, {"allreduce", 4096}, {"sendrecv", 1024}, {"sendrecv", 4096}};
  EXPECT_EQ(seen, want);
  EXPECT_EQ(j.at("results").size(), want.size()) << "a result given twice";
}

}  // namespace
