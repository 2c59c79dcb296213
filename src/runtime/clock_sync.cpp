// SPDX-License-Identifier: MIT
#include "src/runtime/clock_sync.hpp"

#include <chrono>
#include <limits>
#include <vector>

#include "src/runtime/gather.hpp"
#include "src/runtime/mpi_check.hpp"

namespace commprof {
namespace {

constexpr int kTagFlag = 7401;
constexpr int kTagPing = 7402;
constexpr int kTagPong = 7403;
constexpr int kTagResult = 7404;

// Rank 0's side of the exchange with `peer`: the offset of peer's clock to ours, and the round
// trip it came from.
ClockOffset ping_peer(MPI_Comm comm, int peer, int round_trips, const ClockNs& clock) {
  std::int64_t best_rtt = std::numeric_limits<std::int64_t>::max();
  std::int64_t best_offset = 0;
  for (int i = 0; i < round_trips; ++i) {
    const std::int64_t t_send = clock();
    COMMPROF_MPI_CHECK(MPI_Send(&t_send, 1, MPI_INT64_T, peer, kTagPing, comm));
    std::int64_t t_remote = 0;
    COMMPROF_MPI_CHECK(
        MPI_Recv(&t_remote, 1, MPI_INT64_T, peer, kTagPong, comm, MPI_STATUS_IGNORE));
    const std::int64_t t_recv = clock();
    const std::int64_t rtt = t_recv - t_send;
    if (rtt < best_rtt) {
      best_rtt = rtt;
      // The remote read its clock somewhere inside [t_send, t_recv]; the middle is the best
      // guess, wrong by at most rtt / 2. Written to avoid overflowing t_send + t_recv.
      best_offset = t_send + rtt / 2 - t_remote;
    }
  }
  return {best_offset, best_rtt};
}

// A peer's side: answer each ping with our clock, then learn the offset rank 0 chose.
ClockOffset answer_pings(MPI_Comm comm, int round_trips, const ClockNs& clock) {
  for (int i = 0; i < round_trips; ++i) {
    std::int64_t t_send = 0;
    COMMPROF_MPI_CHECK(MPI_Recv(&t_send, 1, MPI_INT64_T, 0, kTagPing, comm, MPI_STATUS_IGNORE));
    const std::int64_t t_remote = clock();
    COMMPROF_MPI_CHECK(MPI_Send(&t_remote, 1, MPI_INT64_T, 0, kTagPong, comm));
  }
  std::int64_t result[2] = {0, 0};
  COMMPROF_MPI_CHECK(MPI_Recv(result, 2, MPI_INT64_T, 0, kTagResult, comm, MPI_STATUS_IGNORE));
  return {result[0], result[1]};
}

// Rank 0 measures each rank that asks to be measured, one after another.
ClockOffset run_exchange(MPI_Comm comm, bool measure_me, int round_trips, const ClockNs& clock) {
  if (round_trips < 1) round_trips = 1;
  int rank = 0;
  int size = 1;
  COMMPROF_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  COMMPROF_MPI_CHECK(MPI_Comm_size(comm, &size));
  // One peer at a time, so rank 0 is never busy with two and each round trip is as short as the
  // transport allows.
  if (rank == 0) {
    for (int peer = 1; peer < size; ++peer) {
      int measured = 0;
      COMMPROF_MPI_CHECK(MPI_Recv(&measured, 1, MPI_INT, peer, kTagFlag, comm, MPI_STATUS_IGNORE));
      if (measured == 0) continue;
      const ClockOffset o = ping_peer(comm, peer, round_trips, clock);
      const std::int64_t result[2] = {o.offset_ns, o.round_trip_ns};
      COMMPROF_MPI_CHECK(MPI_Send(result, 2, MPI_INT64_T, peer, kTagResult, comm));
    }
    return {};
  }
  const int measured = measure_me ? 1 : 0;
  COMMPROF_MPI_CHECK(MPI_Send(&measured, 1, MPI_INT, 0, kTagFlag, comm));
  return measure_me ? answer_pings(comm, round_trips, clock) : ClockOffset{};
}

}  // namespace

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ClockOffset measure_clock_offset(MPI_Comm comm, int round_trips, const ClockNs& clock) {
  return run_exchange(comm, true, round_trips, clock);
}

std::int64_t measure_clock_offset_ns(MPI_Comm comm, int round_trips, const ClockNs& clock) {
  return measure_clock_offset(comm, round_trips, clock).offset_ns;
}

std::int64_t estimate_clock_offset_ns(MPI_Comm comm, const std::string& host, int round_trips,
                                      const ClockNs& clock) {
  return estimate_clock_offset(comm, host, round_trips, clock).offset_ns;
}

ClockOffset estimate_clock_offset(MPI_Comm comm, const std::string& host, int round_trips,
                                  const ClockNs& clock) {
  // Every rank learns rank 0's host name.
  const bool same_host = broadcast_string(host, 0, comm) == host;
  return run_exchange(comm, !same_host, round_trips, clock);
}

}  // namespace commprof
