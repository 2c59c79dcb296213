// SPDX-License-Identifier: MIT
// Clock offsets under mpirun: ranks of this one host share CLOCK_MONOTONIC, so measured offsets
// are near 0; a clock shifted by a known amount per rank is recovered by the estimator.
#include "src/runtime/clock_sync.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace commprof {
namespace {

// The estimator's own guarantee: the true offset lies within half the round trip it kept
// (+1 ns for the halving's rounding). It holds however slow the round trips were (4 ranks on 2
// busy cores, a sanitizer), so no time bound has to be scaled.
std::int64_t bound(const ClockOffset& o) { return o.round_trip_ns / 2 + 1; }

// What the round trip may be, measured apart from the estimator: rank 0 pings a peer only once
// the peer has entered the exchange, and the peer leaves it after the last pong, so all of its
// `round_trips` round trips, one after another, lie inside the peer's call; the shortest of them
// (the one kept) is at most the call's duration over their number. An estimator that reported a
// longer round trip than it had would widen bound() and let any offset through.
template <class Call>
ClockOffset timed_exchange(int round_trips, Call&& call, std::int64_t& most_rtt) {
  const std::int64_t before = steady_now_ns();
  const ClockOffset o = call();
  most_rtt = (steady_now_ns() - before) / round_trips;
  return o;
}

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

// Every rank's value at rank 0, so one rank can check them all (and print them on failure).
std::vector<std::int64_t> gather(std::int64_t v) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<std::int64_t> all(static_cast<std::size_t>(size));
  MPI_Allgather(&v, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
  return all;
}

TEST(ClockSync, MeasuredOffsetsOnOneHostAreNearZero) {
  std::int64_t most_rtt = 0;
  const ClockOffset o = timed_exchange(
      kClockSyncRoundTrips, [] { return measure_clock_offset(MPI_COMM_WORLD); }, most_rtt);
  if (rank_of(MPI_COMM_WORLD) == 0) {
    EXPECT_EQ(o.offset_ns, 0);
    EXPECT_EQ(o.round_trip_ns, 0);
  } else {
    EXPECT_GT(o.round_trip_ns, 0);
    EXPECT_LE(o.round_trip_ns, most_rtt) << "the call took " << most_rtt << " ns a round trip";
  }
  EXPECT_LE(std::llabs(o.offset_ns), bound(o))
      << "offset " << o.offset_ns << " ns, round trip " << o.round_trip_ns << " ns";
}

TEST(ClockSync, RecoversAnArtificialOffset) {
  // Rank r's clock runs 1.5 ms × r − 0.2 ms ahead of the real one (rank 0 unshifted), so to get
  // rank 0's clock it must add −shift.
  const int rank = rank_of(MPI_COMM_WORLD);
  const std::int64_t shift = rank == 0 ? 0 : 1'500'000LL * rank - 200'000;
  const ClockNs shifted = [shift] { return steady_now_ns() + shift; };
  std::int64_t most_rtt = 0;
  const ClockOffset o = timed_exchange(
      200, [&] { return measure_clock_offset(MPI_COMM_WORLD, 200, shifted); }, most_rtt);
  if (rank != 0) {
    EXPECT_LE(o.round_trip_ns, most_rtt);
  }
  EXPECT_LE(std::llabs(o.offset_ns + shift), bound(o))
      << "rank " << rank << " shift " << shift << " round trip " << o.round_trip_ns;
  // Mapping a shifted reading back with the offset lands on rank 0's (real) clock.
  const std::int64_t before = steady_now_ns();
  const std::int64_t now_mapped = shifted() + o.offset_ns;
  const std::int64_t after = steady_now_ns();
  EXPECT_GE(now_mapped, before - bound(o));
  EXPECT_LE(now_mapped, after + bound(o));
}

TEST(ClockSync, RanksOnRankZerosHostGetExactlyZero) {
  const std::int64_t offset = estimate_clock_offset_ns(MPI_COMM_WORLD, "node-a");
  EXPECT_EQ(offset, 0);
}

TEST(ClockSync, RanksOnOtherHostsAreMeasured) {
  // Odd ranks claim another host name: they are measured (near 0 here, as the clock is really
  // shared) and a shifted clock on them is recovered; even ranks share rank 0's name: exactly 0
  // even though their clock is shifted too, because one host has one CLOCK_MONOTONIC.
  const int rank = rank_of(MPI_COMM_WORLD);
  const bool other = rank % 2 == 1;
  const std::int64_t shift = rank == 0 ? 0 : 3'000'000LL * rank;
  const ClockNs shifted = [shift] { return steady_now_ns() + shift; };
  const ClockOffset o =
      estimate_clock_offset(MPI_COMM_WORLD, other ? "node-b" : "node-a", 200, shifted);
  if (other) {
    EXPECT_LE(std::llabs(o.offset_ns + shift), bound(o)) << "round trip " << o.round_trip_ns;
  } else {
    EXPECT_EQ(o.offset_ns, 0);
    EXPECT_EQ(o.round_trip_ns, 0) << "not measured: one host has one clock";
  }
  const std::vector<std::int64_t> all = gather(o.offset_ns);
  EXPECT_EQ(all[0], 0);
}

TEST(ClockSync, OneRoundTripStillWorks) {
  // 0 round trips is clamped to 1. Every rank here reads the same steady clock, so the one
  // round trip's estimate is within that round trip of the true offset, 0 (the midpoint rule:
  // |offset| ≤ round trip / 2); rank 0 is its own reference and measures nothing.
  const int me = rank_of(MPI_COMM_WORLD);
  const ClockOffset o = estimate_clock_offset(MPI_COMM_WORLD, "node-" + std::to_string(me), 0);
  if (me == 0) {
    EXPECT_EQ(o.offset_ns, 0);
    EXPECT_EQ(o.round_trip_ns, 0);
  } else {
    EXPECT_GT(o.round_trip_ns, 0) << "one round trip was measured";
    EXPECT_LE(std::llabs(o.offset_ns), bound(o)) << "round trip " << o.round_trip_ns;
  }
}

}  // namespace
}  // namespace commprof
