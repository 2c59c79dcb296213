// SPDX-License-Identifier: MIT
// The interval algebra on hand-worked inputs: every answer below is exact.
#include "analysis/interval_set.hpp"

#include <gtest/gtest.h>

#include "src/timeline/op_record.hpp"

namespace commprof {
namespace {

using Spans = std::vector<Interval>;

TEST(IntervalSet, DisjointUnsortedIntervalsAreSortedAndSummed) {
  const IntervalSet s({{20, 30}, {0, 5}, {10, 12}});
  EXPECT_EQ(s.intervals(), (Spans{{0, 5}, {10, 12}, {20, 30}}));
  EXPECT_EQ(s.length(), 17);
}

TEST(IntervalSet, NestedAndOverlappingIntervalsCountOnce) {
  // [0,100) contains [10,20) and [30,40); [90,120) sticks out by 20.
  const IntervalSet s({{10, 20}, {0, 100}, {30, 40}, {90, 120}});
  EXPECT_EQ(s.intervals(), (Spans{{0, 120}}));
  EXPECT_EQ(s.length(), 120);
}

TEST(IntervalSet, TouchingIntervalsMerge) {
  const IntervalSet s({{5, 9}, {0, 5}, {9, 10}});
  EXPECT_EQ(s.intervals(), (Spans{{0, 10}}));
}

// Adding one canonical set to another (a timeline step by step): spans before the added ones stay,
// those it reaches or touches merge with it, later ones keep their place.
TEST(IntervalSet, MergingCanonicalSetsKeepsTheUnion) {
  Spans into{{0, 5}, {10, 20}, {30, 40}};
  merge_canonical(into, Spans{{15, 25}, {40, 45}, {50, 60}});
  EXPECT_EQ(into, (Spans{{0, 5}, {10, 25}, {30, 45}, {50, 60}}));
  merge_canonical(into, Spans{{-10, -5}});  // wholly before: the tail is everything
  EXPECT_EQ(into, (Spans{{-10, -5}, {0, 5}, {10, 25}, {30, 45}, {50, 60}}));
  merge_canonical(into, Spans{});
  EXPECT_EQ(total_length(into), 5 + 5 + 15 + 15 + 10);
  Spans empty;
  merge_canonical(empty, Spans{{1, 2}});
  EXPECT_EQ(empty, (Spans{{1, 2}}));
}

// The crash tests/fuzz found (a span of ~2^64 ns overflowing length()) is refused by the readers
// now (RankFile.TimesOutsideTheDomainAreRefused); spans across the whole domain are exact.
TEST(IntervalSet, LengthsAcrossTheWholeDomainAreExact) {
  constexpr std::int64_t kEdge = 2 * kMaxTimeNs;
  const IntervalSet a({{-kEdge, 0}, {1, kEdge}});
  const IntervalSet b({{-kEdge, kEdge}});
  EXPECT_EQ(a.length(), 2 * kEdge - 1);
  EXPECT_EQ(b.length(), 2 * kEdge);
  EXPECT_EQ(a.unite(b).length(), 2 * kEdge);
  EXPECT_EQ(a.intersect(b).length(), 2 * kEdge - 1);
  EXPECT_EQ(b.subtract(a).intervals(), (Spans{{0, 1}}));
  EXPECT_EQ(intersection_length(a.intervals(), b.intervals()), 2 * kEdge - 1);
}

TEST(IntervalSet, ZeroLengthIntervalsOccupyNoTime) {
  const IntervalSet s({{3, 3}, {7, 7}, {0, 2}});
  EXPECT_EQ(s.intervals(), (Spans{{0, 2}}));
  EXPECT_EQ(s.length(), 2);
  EXPECT_TRUE(IntervalSet({{4, 4}}).empty());
  EXPECT_EQ(IntervalSet().length(), 0);
}

TEST(IntervalSet, IntersectionOfTwoUnions) {
  const IntervalSet a({{0, 10}, {20, 30}, {40, 50}});
  const IntervalSet b({{5, 25}, {45, 60}});
  EXPECT_EQ(a.intersect(b).intervals(), (Spans{{5, 10}, {20, 25}, {45, 50}}));
  EXPECT_EQ(a.intersect(b).length(), 15);
  EXPECT_EQ(b.intersect(a).intervals(), a.intersect(b).intervals());
  // Touching is not overlapping.
  EXPECT_TRUE(IntervalSet({{0, 5}}).intersect(IntervalSet({{5, 9}})).empty());
  EXPECT_TRUE(a.intersect(IntervalSet()).empty());
}

TEST(IntervalSet, DifferenceRemovesCoveredTime) {
  const IntervalSet a({{0, 10}, {20, 30}, {40, 50}});
  const IntervalSet b({{5, 25}, {42, 44}, {45, 60}});
  EXPECT_EQ(a.subtract(b).intervals(), (Spans{{0, 5}, {25, 30}, {40, 42}, {44, 45}}));
  EXPECT_EQ(a.subtract(b).length(), 13);  // 5 + 5 + 2 + 1
  // |A \ B| = |A| − |A ∩ B|.
  EXPECT_EQ(a.subtract(b).length(), a.length() - a.intersect(b).length());
  EXPECT_EQ(a.subtract(IntervalSet()).intervals(), a.intervals());
  EXPECT_TRUE(a.subtract(IntervalSet({{-5, 100}})).empty());
}

TEST(IntervalSet, UnionOfTwoSets) {
  const IntervalSet a({{0, 10}, {40, 50}});
  const IntervalSet b({{10, 20}, {60, 70}});
  EXPECT_EQ(a.unite(b).intervals(), (Spans{{0, 20}, {40, 50}, {60, 70}}));
}

TEST(IntervalSet, CoveredCountsTimeInsideAWindow) {
  const IntervalSet s({{0, 10}, {20, 30}});
  EXPECT_EQ(s.covered(5, 25), 10);
  EXPECT_EQ(s.covered(10, 20), 0);
  EXPECT_EQ(s.covered(-100, 100), 20);
  EXPECT_EQ(s.covered(7, 7), 0);
}

TEST(IntervalSet, LargeInputStaysExact) {
  // 100000 unit intervals at even offsets, given in reverse: 100000 ns covered, none merged.
  std::vector<Interval> v;
  for (std::int64_t i = 100000; i-- > 0;) v.push_back({2 * i, 2 * i + 1});
  const IntervalSet s(std::move(v));
  EXPECT_EQ(s.intervals().size(), 100000u);
  EXPECT_EQ(s.length(), 100000);
}

}  // namespace
}  // namespace commprof
