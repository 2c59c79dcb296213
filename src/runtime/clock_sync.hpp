// SPDX-License-Identifier: MIT
// Clock offsets across hosts: each rank's offset to rank 0's host steady clock, estimated at
// start by ping-pong over MPI. The offset is what to ADD to a rank's times to get rank 0's clock
// (RankTimeline::clock_offset_ns).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>

namespace commprof {

/// A clock in ns. Production uses steady_now_ns(); tests inject a shifted one.
using ClockNs = std::function<std::int64_t()>;

/// The host steady clock (CLOCK_MONOTONIC through std::chrono::steady_clock) in ns.
std::int64_t steady_now_ns();

inline constexpr int kClockSyncRoundTrips = 32;

/// An estimated offset and the round trip it was taken from: the true offset lies within half
/// that round trip of the estimate (rank 0: offset 0, round trip 0, exact).
struct ClockOffset {
  std::int64_t offset_ns = 0;
  std::int64_t round_trip_ns = 0;
};

/// Collective over `comm`. Rank 0 ping-pongs with ranks 1, 2, … in turn, `round_trips` times
/// each, and keeps the round trip with the least delay: offset = (t0_send + t0_recv) / 2 −
/// t_remote. Returns this rank's offset in ns (rank 0: 0). Always measures, whatever the hosts.
/// Error bound: half the kept round trip (a few µs over shared memory).
std::int64_t measure_clock_offset_ns(MPI_Comm comm, int round_trips = kClockSyncRoundTrips,
                                     const ClockNs& clock = steady_now_ns);
/// The same, with the round trip that bounds its error.
ClockOffset measure_clock_offset(MPI_Comm comm, int round_trips = kClockSyncRoundTrips,
                                 const ClockNs& clock = steady_now_ns);

/// Collective over `comm`: this rank's offset to rank 0's clock, for the rank file. A rank whose
/// `host` equals rank 0's gets exactly 0 without measuring: CLOCK_MONOTONIC is one system-wide
/// clock, so processes of one host read the same time and any measured offset would be noise of
/// the size of the round trip. Other ranks are measured as in measure_clock_offset_ns().
std::int64_t estimate_clock_offset_ns(MPI_Comm comm, const std::string& host,
                                      int round_trips = kClockSyncRoundTrips,
                                      const ClockNs& clock = steady_now_ns);
/// The same, with the round trip that bounds its error (0 where not measured).
ClockOffset estimate_clock_offset(MPI_Comm comm, const std::string& host,
                                  int round_trips = kClockSyncRoundTrips,
                                  const ClockNs& clock = steady_now_ns);

}  // namespace commprof
