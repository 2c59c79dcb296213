// SPDX-License-Identifier: MIT
#include "collectives/routing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "tests/support/temp_dir.hpp"

namespace commprof {
namespace {

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::uint64_t{0});
}

std::string data_file(const std::string& name) {
  return std::string(COMMPROF_SOURCE_DIR) + "/tests/data/routing/" + name;
}

// The ConfigError's message of `body`, or "" when it throws none.
template <class F>
std::string config_error(F body) {
  try {
    body();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

RoutingTable table_of(const std::string& text) {
  std::istringstream in(text);
  return parse_routing_table(in, "t.txt");
}

// --- --routing ----------------------------------------------------------------------------------

TEST(Routing, ParsesEveryForm) {
  EXPECT_EQ(parse_routing("uniform").kind, RoutingKind::kUniform);
  EXPECT_EQ(parse_routing("zipf").kind, RoutingKind::kZipf);
  EXPECT_EQ(parse_routing("zipf").zipf_exponent, kDefaultZipfExponent);
  EXPECT_EQ(parse_routing("zipf:1.25").zipf_exponent, 1.25);
  EXPECT_EQ(parse_routing("zipf:1.25").text(), "zipf:1.25");
  EXPECT_EQ(parse_routing("file:a/b.txt").kind, RoutingKind::kFile);
  EXPECT_EQ(parse_routing("file:a/b.txt").path, "a/b.txt");
  EXPECT_EQ(parse_routing("file:a/b.txt").text(), "file:a/b.txt");
}

TEST(Routing, RefusesBadValuesNamingThem) {
  EXPECT_EQ(config_error([] { parse_routing("zipfian"); }),
            "unknown --routing 'zipfian': expected uniform, zipf, zipf:S (S >= 0) or file:PATH");
  EXPECT_EQ(config_error([] { parse_routing("zipf:-1"); }),
            "invalid --routing 'zipf:-1': the Zipf exponent '-1' is not a number >= 0");
  EXPECT_EQ(config_error([] { parse_routing("zipf:x"); }),
            "invalid --routing 'zipf:x': the Zipf exponent 'x' is not a number >= 0");
  EXPECT_EQ(config_error([] { parse_routing("zipf:"); }),
            "invalid --routing 'zipf:': the Zipf exponent '' is not a number >= 0");
  EXPECT_EQ(config_error([] { parse_routing("file:"); }),
            "invalid --routing 'file:': no file named");
  EXPECT_EQ(config_error([] { Routing(parse_routing("uniform"), 0); }),
            "a routing needs at least 1 expert, not 0");
  EXPECT_EQ(config_error([] { Routing(parse_routing("uniform"), 8).expert_counts(4, 9, 0, 0, 0); }),
            "top-k 9 must be between 1 and the 8 experts");
}

// --- counts -------------------------------------------------------------------------------------

TEST(Routing, CountsSumToTokensTimesTopKAndNoneExceedsTheTokens) {
  const std::vector<Routing> routings = {
      Routing(parse_routing("uniform"), 64), Routing(parse_routing("zipf"), 64),
      Routing(parse_routing("zipf:2.5"), 64),  // steep: the top experts hit the cap
      Routing(parse_routing("zipf:0"), 64)};
  for (const Routing& routing : routings) {
    for (std::uint64_t tokens : {0, 1, 7, 100, 4096}) {
      for (int top_k : {1, 6, 64}) {
        for (int rank : {0, 3}) {
          SCOPED_TRACE(routing.spec().text() + " tokens " + std::to_string(tokens) + " top-k " +
                       std::to_string(top_k) + " rank " + std::to_string(rank));
          const auto counts = routing.expert_counts(tokens, top_k, 5, 2, rank);
          ASSERT_EQ(counts.size(), 64u);
          EXPECT_EQ(sum(counts), tokens * static_cast<std::uint64_t>(top_k));
          EXPECT_LE(*std::max_element(counts.begin(), counts.end()), tokens);
        }
      }
    }
  }
}

TEST(Routing, AStepZipfCapsTheTopExpertsAtOneCopyPerToken) {
  // zipf:2.5 over 8 experts would give the first 74% of all copies; top-6 allows it at most
  // 1/6 of them (each token once): the cap binds, the rest is shared out again.
  const Routing routing(parse_routing("zipf:2.5"), 8);
  const auto counts = routing.expert_counts(100, 6, 0, 0, 0);
  EXPECT_EQ(sum(counts), 600u);
  EXPECT_EQ(std::count(counts.begin(), counts.end(), 100u), 4);
}

TEST(Routing, UniformIsEqualWithinOneAndSpreadsTheRemainderOverRanks) {
  const Routing routing(parse_routing("uniform"), 8);
  std::vector<std::uint64_t> over_ranks(8, 0);
  for (int rank = 0; rank < 8; ++rank) {
    const auto counts = routing.expert_counts(5, 3, 0, 0, rank);  // 15 copies over 8 experts
    const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
    EXPECT_EQ(*lo, 1u);
    EXPECT_EQ(*hi, 2u);
    for (std::size_t e = 0; e < 8; ++e) over_ranks[e] += counts[e];
  }
  // 8 ranks × 15 copies = 120 = 8 × 15: the extras rotate, so every expert gets 15.
  for (std::uint64_t c : over_ranks) EXPECT_EQ(c, 15u);
}

TEST(Routing, ZipfRepeatsForTheSameStepLayerAndRankAndMovesBetweenSteps) {
  const Routing a(parse_routing("zipf"), 64);
  const Routing b(parse_routing("zipf"), 64);
  EXPECT_EQ(a.expert_counts(4096, 6, 3, 1, 2), b.expert_counts(4096, 6, 3, 1, 2));
  EXPECT_NE(a.expert_counts(4096, 6, 3, 1, 2), a.expert_counts(4096, 6, 4, 1, 2));  // step
  EXPECT_NE(a.expert_counts(4096, 6, 3, 1, 2), a.expert_counts(4096, 6, 3, 1, 3));  // rank
  // Another layer ranks the experts in another order: its most loaded expert differs.
  const auto layer0 = a.expert_counts(4096, 6, 0, 0, 0);
  const auto layer1 = a.expert_counts(4096, 6, 0, 1, 0);
  EXPECT_NE(std::max_element(layer0.begin(), layer0.end()) - layer0.begin(),
            std::max_element(layer1.begin(), layer1.end()) - layer1.begin());
}

// The default's skew, measured as DODOCO measures a layer's routing: the tokens each of the 64
// experts received from a whole batch (8 ranks × 4096 tokens, top-6), here averaged over 16
// layers and 4 steps. DODOCO's DeepSeek-MoE-16B on wikitext: Gini 0.105.
TEST(Routing, DefaultZipfMatchesTheGiniOfRealText) {
  const Routing routing(parse_routing("zipf"), 64);
  double gini = 0;
  double max_over_mean = 0;
  int layers = 0;
  for (std::uint64_t step = 0; step < 4; ++step) {
    for (int layer = 0; layer < 16; ++layer) {
      std::vector<std::uint64_t> load(64, 0);
      for (int rank = 0; rank < 8; ++rank) {
        const auto counts = routing.expert_counts(4096, 6, step, layer, rank);
        for (std::size_t e = 0; e < 64; ++e) load[e] += counts[e];
      }
      const LoadStats s = load_stats(load);
      gini += s.gini;
      max_over_mean += s.max_over_mean;
      ++layers;
    }
  }
  gini /= layers;
  max_over_mean /= layers;
  RecordProperty("gini", std::to_string(gini));
  RecordProperty("max_over_mean", std::to_string(max_over_mean));
  std::printf("default zipf, 64 experts, top-6: Gini %.4f, max/mean %.3f\n", gini, max_over_mean);
  // Measured at 0.205: Gini 0.1058, max/mean 1.898 (docs/collectives.md states both).
  EXPECT_NEAR(gini, 0.105, 0.002);
  EXPECT_NEAR(max_over_mean, 1.90, 0.01);
}

TEST(Routing, CountsPerRankSumTheirExperts) {
  EXPECT_EQ(counts_per_rank({1, 2, 3, 4, 5, 6}, 3), (std::vector<std::uint64_t>{3, 7, 11}));
  EXPECT_EQ(counts_per_rank({1, 2, 3, 4, 5, 6}, 1), (std::vector<std::uint64_t>{21}));
  EXPECT_EQ(config_error([] {
              counts_per_rank({1, 2, 3, 4, 5, 6}, 4);
            }),
            "6 experts do not divide evenly among 4 expert-parallel ranks");
}

TEST(Routing, LoadStatsByHand) {
  EXPECT_DOUBLE_EQ(load_stats({3, 3, 3, 3}).max_over_mean, 1.0);
  EXPECT_DOUBLE_EQ(load_stats({3, 3, 3, 3}).gini, 0.0);
  EXPECT_DOUBLE_EQ(load_stats({0, 0, 0, 4}).max_over_mean, 4.0);
  EXPECT_DOUBLE_EQ(load_stats({0, 0, 0, 4}).gini, 0.75);  // (n−1)/n
  // {1,2,3,4}: max 4 over mean 2.5; Gini (−3·1 − 1·2 + 1·3 + 3·4) / (4·10) = 0.25.
  EXPECT_DOUBLE_EQ(load_stats({4, 1, 3, 2}).max_over_mean, 1.6);
  EXPECT_DOUBLE_EQ(load_stats({4, 1, 3, 2}).gini, 0.25);
  EXPECT_DOUBLE_EQ(load_stats({0, 0}).gini, 0.0);
}

// --- file:PATH ----------------------------------------------------------------------------------

TEST(RoutingFile, ReadsTheExample) {
  const RoutingTable t = read_routing_table(data_file("example-8experts.txt"));
  ASSERT_EQ(t.layers.size(), 2u);
  EXPECT_EQ(t.experts(), 8);
  EXPECT_EQ(t.layers[0][0], 1650u);
  EXPECT_EQ(t.layers[1][7], 1633u);  // before the trailing comment
}

TEST(RoutingFile, ScalesALayersCountsToTheRunsTokens) {
  std::istringstream in("layer 0: 1 1 2 4\n");
  const RoutingTable t = parse_routing_table(in, "t.txt");
  EXPECT_EQ(t.layers[0], (std::vector<std::uint64_t>{1, 1, 2, 4}));
  // Written to a file the Routing reads: shares 1/8, 1/8, 2/8, 4/8.
  const std::string path = test::own_temp_path("routing_scale") + ".txt";
  {
    std::ofstream out(path);
    out << "layer 0: 1 1 2 4\nlayer 1: 4 2 1 1\n";
  }
  const Routing routing(parse_routing("file:" + path), 4);
  EXPECT_EQ(routing.expert_counts(8, 1, 0, 0, 0), (std::vector<std::uint64_t>{1, 1, 2, 4}));
  EXPECT_EQ(routing.expert_counts(16, 1, 9, 0, 5), (std::vector<std::uint64_t>{2, 2, 4, 8}));
  // 3 tokens × top-2 = 6 copies: shares 0.75, 0.75, 1.5, 3 (at the cap of 3 tokens); rounded
  // down 0, 0, 1, 3, the two copies left go to the largest fractions (0.75, 0.75).
  EXPECT_EQ(routing.expert_counts(3, 2, 0, 0, 0), (std::vector<std::uint64_t>{1, 1, 1, 3}));
  EXPECT_EQ(routing.expert_counts(8, 1, 0, 1, 0), (std::vector<std::uint64_t>{4, 2, 1, 1}));
  // Layers past the file's wrap around: layer 2 is layer 0's counts.
  EXPECT_EQ(routing.expert_counts(8, 1, 0, 2, 0), (std::vector<std::uint64_t>{1, 1, 2, 4}));
  EXPECT_EQ(config_error([&] { Routing(parse_routing("file:" + path), 8); }),
            "routing file '" + path +
                "' counts tokens of 4 experts per layer, not of the 8 "
                "experts asked for");
  std::remove(path.c_str());
}

TEST(RoutingFile, RefusesMalformedFilesNamingTheLine) {
  EXPECT_EQ(config_error([] { table_of("# nothing\n\n"); }), "t.txt: no 'layer <n>: ...' line");
  EXPECT_EQ(config_error([] { table_of("layer 0 1 2\n"); }),
            "t.txt:1: expected 'layer <n>: <count> <count> ...', got 'layer 0 1 2'");
  EXPECT_EQ(config_error([] { table_of("1 2 3\n"); }),
            "t.txt:1: expected 'layer <n>: <count> <count> ...', got '1 2 3'");
  EXPECT_EQ(config_error([] { table_of("layer x: 1 2\n"); }), "t.txt:1: 'x' is not a layer number");
  EXPECT_EQ(
      config_error([] { table_of("layer 0: 1 2\nlayer 2: 1 2\n"); }),
      "t.txt:2: layer 2 where layer 1 was expected (layers are listed 0, 1, 2, ... in order)");
  EXPECT_EQ(config_error([] { table_of("layer 0: 1 -2\n"); }),
            "t.txt:1: '-2' is not a token count (an integer >= 0)");
  EXPECT_EQ(config_error([] { table_of("layer 0: 1 2.5\n"); }),
            "t.txt:1: '2.5' is not a token count (an integer >= 0)");
  EXPECT_EQ(config_error([] { table_of("layer 0: 1 2\n# two\nlayer 1: 1 2 3\n"); }),
            "t.txt:3: layer 1 has 3 experts, layer 0 has 2");
  EXPECT_EQ(config_error([] { table_of("layer 0: 0 0\n"); }),
            "t.txt:1: layer 0 routes no tokens: its shares are undefined");
  EXPECT_EQ(config_error([] { table_of("layer 0:\n"); }), "t.txt:1: layer 0 lists no experts");
  EXPECT_EQ(config_error([] { read_routing_table("/no/such/routing.txt"); }),
            "cannot read routing file '/no/such/routing.txt': No such file or directory");
}

}  // namespace
}  // namespace commprof
