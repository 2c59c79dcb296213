// SPDX-License-Identifier: MIT
// Checks the files `commprof export-chakra --out PREFIX` wrote (PREFIX in COMMPROF_CHAKRA_PREFIX)
// with a reader of its own (tests/support/chakra_wire_reader.hpp, nothing shared with the
// encoder) against known answers the test's command line gives:
//   COMMPROF_CHAKRA_RANKS   ranks, so PREFIX.0.et .. PREFIX.<ranks-1>.et and no more
//   COMMPROF_CHAKRA_STEP    the step each file holds (its metadata's commprof_step)
//   COMMPROF_CHAKRA_NODES   nodes per file: that rank's ops at the step, one node each
//   COMMPROF_CHAKRA_COLLS   of which collective nodes
//   COMMPROF_CHAKRA_GROUPS  PREFIX.comm_groups.json, as JSON text
// Every file's metadata names its own rank and the world size; node ids run 0..n-1 and each
// dependency points to an earlier node; every collective node names a communicator group of
// comm_groups.json that holds its rank.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

#include "support/chakra_wire_reader.hpp"
#include "support/test_files.hpp"

namespace commprof {
namespace {

TEST(ChakraFiles, EveryRankHasItsStepAsNodes) {
  const std::string prefix = test::env("COMMPROF_CHAKRA_PREFIX");
  const int ranks = std::atoi(test::env("COMMPROF_CHAKRA_RANKS").c_str());
  const std::uint64_t step = std::strtoull(test::env("COMMPROF_CHAKRA_STEP").c_str(), nullptr, 10);
  const std::size_t nodes = std::strtoull(test::env("COMMPROF_CHAKRA_NODES").c_str(), nullptr, 10);
  const int colls = std::atoi(test::env("COMMPROF_CHAKRA_COLLS").c_str());
  ASSERT_FALSE(prefix.empty());
  ASSERT_GT(ranks, 0);
  ASSERT_GT(nodes, 0u);
  const nlohmann::json groups =
      nlohmann::json::parse(test::file_bytes(prefix + ".comm_groups.json"));
  EXPECT_EQ(groups, nlohmann::json::parse(test::env("COMMPROF_CHAKRA_GROUPS")));
  EXPECT_FALSE(std::filesystem::exists(prefix + "." + std::to_string(ranks) + ".et"));
  for (int r = 0; r < ranks; ++r) {
    const std::string path = prefix + "." + std::to_string(r) + ".et";
    const chakra_wire::Trace t = chakra_wire::read_trace(test::file_bytes(path));
    std::map<std::string, chakra_wire::Attr> meta;
    for (const chakra_wire::Attr& a : t.meta) meta[a.name] = a;
    ASSERT_EQ(meta.count("rank"), 1u) << path;
    EXPECT_EQ(meta.at("rank").number, static_cast<std::uint64_t>(r)) << path;
    EXPECT_EQ(meta.at("world_size").number, static_cast<std::uint64_t>(ranks)) << path;
    EXPECT_EQ(meta.at("commprof_step").number, step) << path;
    ASSERT_EQ(t.nodes.size(), nodes) << path;
    int coll = 0;
    for (std::size_t i = 0; i < t.nodes.size(); ++i) {
      const chakra_wire::Node& n = t.nodes[i];
      EXPECT_EQ(n.id, i) << path;
      for (const std::uint64_t d : n.data) EXPECT_LT(d, i) << path << " " << n.name;
      for (const std::uint64_t d : n.ctrl) EXPECT_LT(d, i) << path << " " << n.name;
      if (n.type != chakra_wire::kColl) continue;
      ++coll;
      const std::string& pg = n.attr("pg_name").text;
      ASSERT_TRUE(groups.contains(pg)) << path << " " << n.name << ": group " << pg;
      bool member = false;
      for (const auto& m : groups.at(pg)) member = member || m.get<int>() == r;
      EXPECT_TRUE(member) << path << " " << n.name << ": rank " << r << " not in group " << pg;
    }
    EXPECT_EQ(coll, colls) << path;
  }
}

}  // namespace
}  // namespace commprof
