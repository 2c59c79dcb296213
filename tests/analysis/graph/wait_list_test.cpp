// SPDX-License-Identifier: MIT
// WaitList: an op's waits, up to four held in the list itself, more on the heap; copies and
// moves keep the entries, and emptying keeps the heap's storage.
#include "analysis/graph/wait_list.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace commprof {
namespace {

TEST(WaitList, HoldsItsEntriesInOrderPastWhatFitsInItself) {
  WaitList w;
  EXPECT_TRUE(w.empty());
  for (int i = 0; i < 11; ++i) w.push_back(10 * i);  // 4 inside, then 8 and 16 on the heap
  ASSERT_EQ(w.size(), 11u);
  EXPECT_EQ(w, (std::vector<int>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}));
  EXPECT_EQ(w[3], 30);
  EXPECT_EQ(w[10], 100);
  EXPECT_EQ(w.to_vector().back(), 100);
  w.clear();
  EXPECT_TRUE(w.empty());
  w.push_back(7);
  EXPECT_EQ(w, (std::vector<int>{7}));
  EXPECT_NE(w, (std::vector<int>{7, 8}));
}

TEST(WaitList, ResizeKeepsWhatIsThereAndAddsZeros) {
  WaitList w{5, 6};
  w.resize(3);
  EXPECT_EQ(w, (std::vector<int>{5, 6, 0}));
  w.resize(6);  // onto the heap
  EXPECT_EQ(w, (std::vector<int>{5, 6, 0, 0, 0, 0}));
  w.resize(1);
  EXPECT_EQ(w, (std::vector<int>{5}));
}

TEST(WaitList, CopiesAndMovesKeepTheEntriesAndLeaveTheSourceAsDocumented) {
  for (const std::vector<int>& entries :
       {std::vector<int>{1, 2}, std::vector<int>{1, 2, 3, 4, 5, 6}}) {
    SCOPED_TRACE(entries.size());
    WaitList a;
    a.assign(entries.begin(), entries.end());
    WaitList copy(a);
    EXPECT_EQ(copy, entries);
    EXPECT_EQ(a, entries);
    copy.push_back(9);
    EXPECT_EQ(a, entries);  // the copy has its own storage
    WaitList moved(std::move(a));
    EXPECT_EQ(moved, entries);
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from lists are empty
    WaitList assigned{42};
    assigned = moved;
    EXPECT_EQ(assigned, moved);
    WaitList taken{1, 2, 3, 4, 5, 6, 7};
    taken = std::move(assigned);
    EXPECT_EQ(taken, entries);
    taken = taken;  // NOLINT: assigning a list to itself leaves it as it is
    EXPECT_EQ(taken, entries);
  }
}

}  // namespace
}  // namespace commprof
