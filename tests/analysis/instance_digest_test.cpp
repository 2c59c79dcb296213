// SPDX-License-Identifier: MIT
// An owner's digest of its collective instances (instance_digest.hpp): every field comes back
// from its message, and two digests merge into the sums, bounds and firsts of both.
#include "analysis/instance_digest.hpp"

#include <gtest/gtest.h>

#include "analysis/reduction_wire.hpp"
#include "support/wire_round_trip.hpp"

namespace commprof {
namespace {

InstanceDigest some_digest() {
  InstanceDigest d;
  d.total = 1;
  d.incomplete = 2;
  d.inconsistent = 3;
  d.first_incomplete = {4, "allreduce on 'dp0' seq 4 (3 of 4 ranks)"};
  d.first_inconsistent = {5, "broadcast on 'tp1' seq 5"};
  InstanceDigest::SizeSums& s = d.sizes[{"allreduce", 6, 7, 1}];
  s.count = 8;
  s.skew_ns = 9;
  s.wait_ns = 10;
  s.min_time_ns = 11;
  s.max_time_ns = 12;
  s.algos = {{"Ring/LL", 13}};
  s.offrank_count = 14;
  s.offrank_bytes = 15;
  InstanceDigest::GroupSums& g = d.groups["dp"];
  g.comms = {"dp0", "dp1"};
  g.min_size = 16;
  g.max_size = 17;
  g.instances = 18;
  g.incomplete = 19;
  g.bytes = 20;
  g.time_ns = 21;
  g.skew_ns = 22;
  g.wait_ns = 23;
  g.bus[{"allreduce", 24}] = {25, 26, 27, 28, 29};
  d.alltoall_waits = {{"ep", 30}};
  d.min_start_ns = 31;
  d.max_start_ns = 32;
  d.min_order = 33;
  d.max_order = 34;
  CollectiveInstance c;
  c.comm = "dp0";
  c.seq = 35;
  c.wait_caused_ns = 36;
  d.worst = {c};
  return d;
}

TEST(InstanceDigest, EveryFieldComesBack) {
  const InstanceDigest d = test::round_trip(some_digest());
  EXPECT_EQ(d.total, 1);
  EXPECT_EQ(d.incomplete, 2);
  EXPECT_EQ(d.inconsistent, 3);
  EXPECT_EQ(d.first_incomplete.order, 4u);
  EXPECT_EQ(d.first_incomplete.text, "allreduce on 'dp0' seq 4 (3 of 4 ranks)");
  EXPECT_EQ(d.first_inconsistent.order, 5u);
  EXPECT_EQ(d.first_inconsistent.text, "broadcast on 'tp1' seq 5");
  ASSERT_EQ(d.sizes.size(), 1u);
  EXPECT_EQ(d.sizes.begin()->first, (InstanceDigest::SizeKey{"allreduce", 6, 7, 1}));
  const InstanceDigest::SizeSums& s = d.sizes.begin()->second;
  EXPECT_EQ(s.count, 8);
  EXPECT_EQ(s.skew_ns, 9);
  EXPECT_EQ(s.wait_ns, 10);
  EXPECT_EQ(s.min_time_ns, 11);
  EXPECT_EQ(s.max_time_ns, 12);
  EXPECT_EQ(s.algos, (std::map<std::string, std::uint64_t>{{"Ring/LL", 13}}));
  EXPECT_EQ(s.offrank_count, 14);
  EXPECT_EQ(s.offrank_bytes, 15u);
  ASSERT_EQ(d.groups.size(), 1u);
  const InstanceDigest::GroupSums& g = d.groups.at("dp");
  EXPECT_EQ(g.comms, (std::set<std::string>{"dp0", "dp1"}));
  EXPECT_EQ(g.min_size, 16);
  EXPECT_EQ(g.max_size, 17);
  EXPECT_EQ(g.instances, 18);
  EXPECT_EQ(g.incomplete, 19);
  EXPECT_EQ(g.bytes, 20u);
  EXPECT_EQ(g.time_ns, 21);
  EXPECT_EQ(g.skew_ns, 22);
  EXPECT_EQ(g.wait_ns, 23);
  ASSERT_EQ(g.bus.size(), 1u);
  EXPECT_EQ(g.bus.begin()->first, (std::pair<std::string, int>{"allreduce", 24}));
  const InstanceDigest::BusSums& b = g.bus.begin()->second;
  EXPECT_EQ(b.bytes, 25u);
  EXPECT_EQ(b.offrank_bytes, 26u);
  EXPECT_EQ(b.offrank_count, 27);
  EXPECT_EQ(b.count, 28);
  EXPECT_EQ(b.time_ns, 29);
  EXPECT_EQ(d.alltoall_waits, (std::map<std::string, std::int64_t>{{"ep", 30}}));
  EXPECT_EQ(d.min_start_ns, 31);
  EXPECT_EQ(d.max_start_ns, 32);
  EXPECT_EQ(d.min_order, 33u);
  EXPECT_EQ(d.max_order, 34u);
  ASSERT_EQ(d.worst.size(), 1u);
  EXPECT_EQ(d.worst[0].seq, 35);
  EXPECT_EQ(d.worst[0].wait_caused_ns, 36);
  test::expect_cut_messages_refused(some_digest());
}

// A digest merged with itself: sums doubled, bounds and firsts unchanged, both worst lists.
TEST(InstanceDigest, MergeAddsSumsAndKeepsBounds) {
  InstanceDigest d = some_digest();
  d.merge(some_digest());
  EXPECT_EQ(d.total, 2);
  EXPECT_EQ(d.first_incomplete.order, 4u);
  const InstanceDigest::SizeSums& s = d.sizes.begin()->second;
  EXPECT_EQ(s.count, 16);
  EXPECT_EQ(s.min_time_ns, 11);
  EXPECT_EQ(s.max_time_ns, 12);
  EXPECT_EQ(s.algos.at("Ring/LL"), 13u);
  EXPECT_EQ(s.offrank_bytes, 30u);
  const InstanceDigest::GroupSums& g = d.groups.at("dp");
  EXPECT_EQ(g.min_size, 16);
  EXPECT_EQ(g.bytes, 40u);
  EXPECT_EQ(g.bus.begin()->second.time_ns, 58);
  EXPECT_EQ(d.alltoall_waits.at("ep"), 60);
  EXPECT_EQ(d.min_order, 33u);
  EXPECT_EQ(d.worst.size(), 2u);
}

}  // namespace
}  // namespace commprof
