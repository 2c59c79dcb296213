// SPDX-License-Identifier: MIT
// `whatif --ideal`'s model against the published answer of "Understanding Stragglers in Large
// Model Training Using What-if Analysis" (Lin et al., OSDI'25): the ST trace of its artifact
// (ByteDance-Seed/StragglerAnalysis, commit 8efcd7f, data/timeline-ST.json.gz, Apache-2.0; see
// tests/data/straggler-analysis/README.md) and the numbers of its data/result-ST.json, within 1%.
#include "workloads/prediction/straggler_trace.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "src/core/errors.hpp"
#include "tests/support/temp_dir.hpp"

namespace commprof {
namespace {

const std::string kStragglerDir = std::string(COMMPROF_TEST_DATA_DIR) + "/straggler-analysis";

std::map<std::string, double> ideal_shares(const IdealResult& r, const std::string& dimension) {
  std::map<std::string, double> out;
  for (const IdealShare& s : r.shares)
    if (s.dimension == dimension) out[s.key] = s.slowdown;
  return out;
}

void expect_within_1pc(double got, double published, const std::string& what) {
  EXPECT_NEAR(got / published, 1.0, 0.01) << what << ": " << got << " vs published " << published;
}

TEST(StragglerTrace, ReproducesThePublishedSlowdownOfST) {
  const IdealGraph g =
      straggler_graph(read_straggler_timeline(kStragglerDir + "/timeline-ST.json.gz"));
  EXPECT_EQ(g.dp, 2);
  EXPECT_EQ(g.steps.size(), 32u);
  const IdealResult r = ideal_analysis(g);
  // data/result-ST.json: blocking_slowdown and the means of step_t_nodelay / step_t_noblk.
  expect_within_1pc(r.slowdown, 1.1787021836556841, "S");
  expect_within_1pc(r.nodelay_s, 2.172696813310722, "mean step, no delay (s)");
  expect_within_1pc(r.ideal_s, 1.843295824372035, "mean step, ideal (s)");
  const auto stage = ideal_shares(r, "stage");
  expect_within_1pc(stage.at("3"), 1.2322559543157936, "stage 3");
  expect_within_1pc(stage.at("0"), 0.9980450635272368, "stage 0");
  expect_within_1pc(stage.at("1"), 0.9830562530894704, "stage 1");
  expect_within_1pc(stage.at("2"), 0.9824931309511952, "stage 2");
  const auto kind = ideal_shares(r, "op_kind");
  expect_within_1pc(kind.at("forward-compute"), 1.0874989663025318, "forward-compute");
  expect_within_1pc(kind.at("backward-compute"), 1.074156472437866, "backward-compute");
  expect_within_1pc(kind.at("embedding-grads-all-reduce"), 1.0095504024370303, "embedding AR");
  expect_within_1pc(kind.at("grads-reduce-scatter"), 1.00266695254219, "grads RS");
  expect_within_1pc(kind.at("forward-pp-comm"), 0.9998586213458615, "forward pp-comm");
  const auto dp = ideal_shares(r, "dp_rank");
  expect_within_1pc(dp.at("1"), 1.1778704237064905, "dp rank 1");
  expect_within_1pc(dp.at("0"), 1.1730828198099532, "dp rank 0");
}

TEST(StragglerTrace, BadInputNamesTheProblem) {
  try {
    read_straggler_timeline(kStragglerDir + "/README.md");
    FAIL() << "a README is not a timeline";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("not a StragglerAnalysis timeline"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_straggler_timeline(kStragglerDir + "/no-such-file.json"), std::exception);
  // A field of the wrong type is named as bad input, not an internal error.
  const std::string bad_type = test::own_temp_path("straggler-bad-type") + ".json";
  std::ofstream(bad_type) << R"([{"ph":"M","name":"thread_name","pid":0,"tid":0,)"
                          << R"("args":{"name":"PP rank 0, TP rank 0, compute"}},)"
                          << R"({"ph":"X","name":"gc","pid":0,"tid":0,"ts":1,"dur":1,)"
                          << R"("args":{"step":"one","seq_id":0}}])";
  try {
    read_straggler_timeline(bad_type);
    FAIL() << "a step that is not a number";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a StragglerAnalysis timeline"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace commprof
