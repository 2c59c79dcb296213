// SPDX-License-Identifier: MIT
// One rank's text to every rank (src/runtime/gather.*): what the root passes arrives whole on
// every rank, whatever the others pass, from rank 0 and from another root, empty or long.
#include "src/runtime/gather.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

namespace commprof {
namespace {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// What a non-root rank passes: longer than the root's short texts, so a receive that kept its
// own length or bytes would show.
std::string decoy(int rank) { return "rank " + std::to_string(rank) + " must not be seen here"; }

TEST(BroadcastString, EveryRankGetsRankZerosText) {
  const int rank = world_rank();
  const std::string mine = rank == 0 ? "host-a\nline two" : decoy(rank);
  EXPECT_EQ(broadcast_string(mine, 0, MPI_COMM_WORLD), "host-a\nline two");
}

TEST(BroadcastString, AnEmptyTextArrivesEmpty) {
  const int rank = world_rank();
  EXPECT_EQ(broadcast_string(rank == 0 ? std::string() : decoy(rank), 0, MPI_COMM_WORLD), "");
}

TEST(BroadcastString, ALongTextWithNulBytesArrivesWhole) {
  // 3 MiB with every byte value, NUL included: the length travels first, nothing stops at a NUL.
  std::string text(3u << 20, '\0');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>(i * 7 % 256);
  const int rank = world_rank();
  const std::string got = broadcast_string(rank == 0 ? text : decoy(rank), 0, MPI_COMM_WORLD);
  EXPECT_EQ(got.size(), text.size());
  EXPECT_TRUE(got == text) << "rank " << rank << " received different bytes";
}

TEST(BroadcastString, AnyRankCanBeTheRoot) {
  // The rank context's agreement speaks from the lowest failing rank, not only from rank 0.
  const int rank = world_rank();
  const int root = world_size() - 1;
  const std::string mine = rank == root ? "from the last rank" : decoy(rank);
  EXPECT_EQ(broadcast_string(mine, root, MPI_COMM_WORLD), "from the last rank");
}

}  // namespace
}  // namespace commprof
