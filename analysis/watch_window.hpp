// SPDX-License-Identifier: MIT
// What `commprof watch` shows at each refresh: the communication that completed since the last one
// (the window), per communicator, collective and size bucket, with the percentiles of its time
// (p50, p95, p99: not only means, which hide the slow calls a watch is for) and busbw; the rank
// most often last to start an instance; collectives enqueued and unfinished for longer than a
// limit (from the NCCL profiler plugin's list of them); and rank files that stopped growing.
//
// Under mpirun each process reads its block of the files into a WatchPart; the parts travel to
// process 0 (wire codec) and merge there. Times are kept as counts in log-spaced bins, 2% wide,
// so parts add exactly whatever the split, and a percentile is the centre of its bin (within 1%
// of the sample's value), never an average of averages.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "src/timeline/rank_views.hpp"

namespace commprof {

/// One communicator, collective and size bucket of a window.
struct WatchKey {
  std::string comm;
  std::string collective;
  std::uint64_t bucket_bytes = 0;  ///< the bucket [bucket_bytes, 2 × bucket_bytes) of S; 0 for 0
  bool operator<(const WatchKey& o) const {
    return std::tie(comm, collective, bucket_bytes) <
           std::tie(o.comm, o.collective, o.bucket_bytes);
  }
  template <class IO>
  friend void transfer(IO& io, WatchKey& k) {
    io(k.comm, k.collective, k.bucket_bytes);
  }
};

/// A collective or transfer some rank enqueued and had not finished when its file was written.
struct WatchStall {
  int rank = 0;
  std::string comm, collective;
  std::int64_t seq = -1;
  double age_s = 0;  ///< since it was enqueued, up to this refresh
  template <class IO>
  friend void transfer(IO& io, WatchStall& s) {
    io(s.rank, s.comm, s.collective, s.seq, s.age_s);
  }
};

/// One process's share of a refresh.
struct WatchPart {
  struct Calls {
    std::int64_t count = 0;
    std::uint64_t bytes = 0;
    int comm_size = 0;
    std::map<std::int32_t, std::uint32_t> bins;  ///< log-spaced duration bin -> calls
    template <class IO>
    friend void transfer(IO& io, Calls& c) {
      io(c.count, c.bytes, c.comm_size, c.bins);
    }
  };
  struct Latest {  ///< of one instance (comm, seq): the latest start seen, and whose
    std::int64_t start_ns = 0;
    int rank = -1;
    int ranks = 0;  ///< ranks seen in it
    WatchKey key;
    template <class IO>
    friend void transfer(IO& io, Latest& l) {
      io(l.start_ns, l.rank, l.ranks, l.key);
    }
  };
  std::map<WatchKey, Calls> calls;
  std::map<std::pair<std::string, std::int64_t>, Latest> instances;
  std::vector<WatchStall> stalls;
  std::map<int, double> quiet_s;    ///< rank -> seconds since its file last changed, where stale
  std::map<int, double> updated_s;  ///< rank -> when its file last changed (Unix time, s)
  int files = 0;
  std::vector<std::string> problems;  ///< files that could not be read, and why

  /// A communication op of `rank`, whose clock is rank 0's after `clock_offset_ns`.
  void add(int rank, std::int64_t clock_offset_ns, const OpView& op);
  /// Adds another process's part.
  void merge(WatchPart&& other);

  template <class IO>
  friend void transfer(IO& io, WatchPart& p) {
    io(p.calls, p.instances, p.stalls, p.quiet_s, p.updated_s, p.files, p.problems);
  }
};

/// A row of the refresh's table.
struct WatchRow {
  std::string comm, collective;
  std::uint64_t bucket_bytes = 0;
  std::int64_t calls = 0;
  std::uint64_t bytes = 0;                    ///< Σ S over the calls
  double p50_ns = 0, p95_ns = 0, p99_ns = 0;  ///< of the calls' durations
  double busbw_gbps = -1;  ///< the mean S over p50, times the bus factor; -1 without one
  int slowest_rank = -1;   ///< the rank most often last to start an instance seen by 2+ ranks
  std::int64_t times_last = 0;
};

/// The table, by communicator, collective and bucket.
std::vector<WatchRow> watch_rows(const WatchPart& part);

/// The duration a bin stands for (its centre), and the bin of a duration.
double watch_bin_ns(std::int32_t bin);
std::int32_t watch_bin_of(double ns);

}  // namespace commprof
