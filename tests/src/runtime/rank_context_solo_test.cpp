// SPDX-License-Identifier: MIT
// The solo rank context (src/runtime/rank_context.*): what a command with no backend, started
// without a launcher, runs on. One rank, this host, the collectives of one rank, and MPI never
// started: the unit-test process has no MPI_Init, so MPI_Initialized tells.
#include <gtest/gtest.h>
#include <mpi.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "src/runtime/rank_context.hpp"

namespace commprof {
namespace {

bool mpi_started() {
  int started = 0;
  MPI_Initialized(&started);
  return started != 0;
}

TEST(SoloRankContext, IsRankZeroOfOneOnThisHostWithoutMpi) {
  const RankContext ctx{RankContext::Solo{}};
  EXPECT_FALSE(ctx.uses_mpi());
  EXPECT_EQ(ctx.rank(), 0);
  EXPECT_EQ(ctx.size(), 1);
  EXPECT_EQ(ctx.local_rank(), 0);
  EXPECT_EQ(ctx.local_size(), 1);
  EXPECT_FALSE(ctx.host().empty());
  EXPECT_EQ(ctx.hosts(), std::vector<std::string>{ctx.host()});
  EXPECT_EQ(ctx.node_count(), 1);
  EXPECT_FALSE(mpi_started());
}

TEST(SoloRankContext, AgreeThrowsTheMessageAndScopeOfItsOneRank) {
  const RankContext ctx{RankContext::Solo{}};
  EXPECT_NO_THROW(ctx.agree(true, "not said"));
  try {
    ctx.agree(false, "--steps must be positive", ErrorScope::kProgram);
    FAIL() << "agree(false) returned";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--steps must be positive");  // no "(on rank N)": rank 0 spoke
    EXPECT_EQ(e.scope(), ErrorScope::kProgram);
  }
}

TEST(SoloRankContext, CollectivesReturnWhatTheOneRankGave) {
  const RankContext ctx{RankContext::Solo{}};
  EXPECT_TRUE(ctx.any(true));
  EXPECT_FALSE(ctx.any(false));
  EXPECT_EQ(ctx.any_bits(5), 5);
  EXPECT_EQ(ctx.broadcast(3), 3);
  EXPECT_EQ(ctx.broadcast(std::string("a\nb")), "a\nb");
  EXPECT_EQ(ctx.gather("part"), std::vector<std::string>{"part"});
  std::vector<int> arrived;
  EXPECT_TRUE(ctx.barrier_within(1.0, arrived));
  EXPECT_NO_THROW(ctx.barrier());
  EXPECT_FALSE(mpi_started());
}

TEST(SoloRankContext, AskingForItsCommunicatorIsAnError) {
  // A path that needs MPI fails loudly instead of handing MPI an invalid communicator.
  const RankContext ctx{RankContext::Solo{}};
  EXPECT_THROW(static_cast<void>(ctx.comm()), std::logic_error);
}

}  // namespace
}  // namespace commprof
