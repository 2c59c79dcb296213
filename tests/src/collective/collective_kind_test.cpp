// SPDX-License-Identifier: MIT
#include "src/collective/collective_kind.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/backend/work.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

using K = CollectiveKind;

TEST(CollectiveKind, AllRunsTheSevenInDocumentedOrder) {
  const std::vector<K> expected = {K::kAllReduce, K::kAllGather, K::kReduceScatter, K::kBroadcast,
                                   K::kReduce,    K::kAllToAll,  K::kSendRecv};
  EXPECT_EQ(all_collective_kinds(), expected);
  EXPECT_EQ(parse_collective_list("all"), expected);
}

TEST(CollectiveKind, NamesRoundTrip) {
  const char* names[] = {"allreduce", "allgather", "reducescatter", "broadcast",
                         "reduce",    "alltoall",  "sendrecv"};
  for (std::size_t i = 0; i < all_collective_kinds().size(); ++i) {
    const K kind = all_collective_kinds()[i];
    EXPECT_STREQ(collective_name(kind), names[i]);
    EXPECT_EQ(parse_collective(names[i]), kind);
  }
}

TEST(CollectiveKind, AcceptsNcclTestsSpellings) {
  EXPECT_EQ(parse_collective("all_reduce"), K::kAllReduce);
  EXPECT_EQ(parse_collective("AllReduce"), K::kAllReduce);
  EXPECT_EQ(parse_collective("all-gather"), K::kAllGather);
  EXPECT_EQ(parse_collective("reduce_scatter"), K::kReduceScatter);
  EXPECT_EQ(parse_collective("alltoAll"), K::kAllToAll);
  EXPECT_EQ(parse_collective("send_recv"), K::kSendRecv);
  EXPECT_EQ(parse_collective("all_to_allv"), K::kAllToAllV);
}

// alltoallv is named, never implied: its counts need a routing that `all` does not choose.
TEST(CollectiveKind, AlltoallvIsNamedButNotInAll) {
  EXPECT_STREQ(collective_name(K::kAllToAllV), "alltoallv");
  EXPECT_EQ(parse_collective("alltoallv"), K::kAllToAllV);
  EXPECT_EQ(parse_collective_list("alltoall,alltoallv"),
            (std::vector<K>{K::kAllToAll, K::kAllToAllV}));
  for (K kind : all_collective_kinds()) EXPECT_NE(kind, K::kAllToAllV);
}

// The uneven all-gather and reduce-scatter have names (rank files and reports carry them) but no
// place in `all`: only MoE workloads run them, with counts from their routing.
TEST(CollectiveKind, UnevenKindsAreNamedButNotInAll) {
  EXPECT_STREQ(collective_name(K::kAllGatherV), "allgatherv");
  EXPECT_STREQ(collective_name(K::kReduceScatterV), "reducescatterv");
  EXPECT_EQ(parse_collective("all_gather_v"), K::kAllGatherV);
  EXPECT_EQ(parse_collective("reduce_scatter_v"), K::kReduceScatterV);
  for (K kind : all_collective_kinds()) {
    EXPECT_NE(kind, K::kAllGatherV);
    EXPECT_NE(kind, K::kReduceScatterV);
  }
}

// Their splits as the backends read them (PeerSplits): counts 2, 0, 3 over three ranks.
TEST(CollectiveKind, UnevenSplitsFromPerRankCounts) {
  const std::vector<std::size_t> counts{2, 0, 3};
  const PeerSplits g = uneven_gather_splits(counts, 2);
  EXPECT_EQ(g.send_counts, (std::vector<std::size_t>{3, 3, 3}));  // its share to every rank
  EXPECT_EQ(g.send_displs, (std::vector<std::size_t>{0, 0, 0}));
  EXPECT_EQ(g.recv_counts, counts);
  EXPECT_EQ(g.recv_displs, (std::vector<std::size_t>{0, 2, 2}));
  const PeerSplits s = uneven_scatter_splits(counts, 0);
  EXPECT_EQ(s.send_counts, counts);  // block p to rank p, back to back
  EXPECT_EQ(s.send_displs, (std::vector<std::size_t>{0, 2, 2}));
  EXPECT_EQ(s.recv_counts, (std::vector<std::size_t>{2, 2, 2}));  // its block from every rank
}

TEST(CollectiveKind, ListKeepsOrderAndDropsDuplicates) {
  EXPECT_EQ(parse_collective_list("sendrecv,allreduce"),
            (std::vector<K>{K::kSendRecv, K::kAllReduce}));
  EXPECT_EQ(parse_collective_list("reduce,allreduce,reduce,all_reduce"),
            (std::vector<K>{K::kReduce, K::kAllReduce}));
}

void expect_rejected(const std::string& text, const std::string& named) {
  try {
    parse_collective_list(text);
    ADD_FAILURE() << "'" << text << "' was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + named + "'"), std::string::npos) << e.what();
  }
}

TEST(CollectiveKind, BadListsAreConfigErrorsNamingTheBadPart) {
  expect_rejected("allreduce,foo", "foo");
  expect_rejected("allreduce,,reduce", "allreduce,,reduce");
  expect_rejected("", "");
  expect_rejected("gather", "gather");
  expect_rejected("ALL", "ALL");  // "all" is a keyword, not a collective name
}

}  // namespace
}  // namespace commprof
