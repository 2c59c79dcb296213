// SPDX-License-Identifier: MIT
// Collectives matched across ranks by (communicator, sequence number): per instance the
// bytes, each rank's duration, algbw and busbw for the communicator's size, the start skew,
// each rank's wait and the last rank to arrive; per rank the wait it suffered and caused.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/timeline/op_record.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {

/// One collective call seen by every rank of its communicator. Times in ns on rank 0's clock.
struct CollectiveInstance {
  std::string comm;
  std::int64_t seq = -1;
  std::string collective;
  int comm_size = 0;
  std::uint64_t bytes = 0;  ///< alltoallv: the most any rank sent
  /// An all-to-all(v) whose ranks recorded their bytes per peer and their comm_rank: the busiest
  /// rank's off-rank bytes, i.e. the most any rank sent to, or received from, the other ranks
  /// (its own share left out). Meaningful when offrank_known().
  std::uint64_t offrank_bytes = 0;
  int offrank_ranks = 0;  ///< ranks whose op gave its off-rank bytes
  std::string algo;       ///< NCCL's "algorithm/protocol" where a rank's file says (plugin)
  std::string phase;      ///< an MoE all-to-all's, told by its first op's name (alltoall_phase)
  /// As OpRecord::in_place where every rank's op says the same; -1 where one differs or none says.
  int in_place = -1;
  int ranks_seen = 0;      ///< ranks that recorded it (< comm_size: incomplete)
  bool consistent = true;  ///< ranks agreed on collective, bytes (but alltoallv) and comm_size
  std::int64_t first_start_ns = 0;
  std::int64_t last_start_ns = 0;
  int first_rank = -1;  ///< earliest arrival
  int last_rank = -1;   ///< latest arrival: everyone else waited for it
  std::int64_t min_end_ns = 0;
  std::int64_t max_end_ns = 0;
  std::int64_t min_duration_ns = 0;  ///< the transfer time: the last arriver barely waits
  std::int64_t max_duration_ns = 0;
  double mean_duration_ns = 0.0;
  std::int64_t wait_caused_ns = 0;  ///< Σ over ranks of (last start − own start)
  std::int64_t start_skew_ns() const { return last_start_ns - first_start_ns; }
  std::int64_t end_skew_ns() const { return max_end_ns - min_end_ns; }
  /// The instance's time: the shortest rank's duration (TraceLens' "comm latency").
  std::int64_t time_ns() const { return min_duration_ns; }
  /// Every rank seen gave its off-rank bytes: busbw is offrank_bytes / time.
  bool offrank_known() const { return ranks_seen > 0 && offrank_ranks == ranks_seen; }
  /// bytes / time in GB/s (10⁹ B/s); 0 when the time is 0.
  double algbw_gbps() const;
  /// algbw × the collective's bus factor for n = comm_size; negative when the collective is
  /// unknown (no factor: reported as n/a). An all-to-all(v) with offrank_known(): offrank_bytes /
  /// time (factor 1 on the busiest rank's off-rank bytes, as `commprof bench`'s alltoallv).
  double busbw_gbps() const;
  /// How busbw_gbps() was worked out: "per-peer" (an all-to-all(v)'s offrank_bytes), else the
  /// factor applied to bytes (busbw_formula_for); "" for an unknown collective.
  std::string_view busbw_basis() const;
  /// Where the instance's first op stands in the job's reading order (CollectiveMatcher::add):
  /// instances are listed in this order however many processes matched them.
  std::uint64_t order = 0;
  std::int64_t sum_duration_ns_ = 0;  ///< exact, so partial sums add up to the same mean
};

/// Per rank, over every matched collective it took part in.
struct RankWait {
  int rank = 0;
  std::string host;  ///< the rank's host, as its file names it (the reducer fills it in)
  std::int64_t collectives = 0;
  std::int64_t wait_ns = 0;         ///< Σ (last start − own start): time this rank waited
  std::int64_t wait_caused_ns = 0;  ///< Σ over instances it arrived last at of others' waits
  std::int64_t times_last = 0;
  std::int64_t times_first = 0;
};

/// The bus factor of a collective by name as a formula ("2(n-1)/n"); "" when unknown. An
/// alltoallv's is alltoall's (n-1)/n: what busbw is without bytes per peer.
std::string_view busbw_formula_for(const std::string& collective);
/// CollectiveInstance::busbw_basis()'s answer for an all-to-all(v) with bytes per peer, and the
/// one it falls back to without them.
inline constexpr std::string_view kBasisPerPeer = "per-peer";
inline constexpr std::string_view kBasisFactor = "(n-1)/n";
inline constexpr std::string_view kBasisMixed = "mixed";  ///< a row of both kinds of instances

/// The bus-bandwidth factor of a collective by name for n ranks; negative when unknown.
/// "send"/"recv" count as point-to-point (factor 1).
double busbw_factor_for(const std::string& collective, int n);

/// Collects collective ops rank by rank, then matches them. Memory: one 16-byte record per
/// collective op plus one instance per (comm, seq), so thousands of ranks fit.
class CollectiveMatcher {
 public:
  /// Whether add() takes `op` (an OpRecord, OpView or a step graph's op): COMM, a collective
  /// name, a comm and seq ≥ 0.
  template <class Op>
  static bool takes(const Op& op) {
    return op.category == Category::kComm && !op.collective.empty() && !op.comm.empty() &&
           op.seq >= 0;
  }
  /// Adds one op of `rank` if it is a collective (takes()).
  /// `clock_offset_ns` is added to its times (RankTimeline::clock_offset_ns). `order` is where
  /// the op stands in the job's reading order (order_of): ops must come in that order here, and
  /// an instance's first op decides its kind, size and place in instances(). Returns the index
  /// in instances() of the instance it joined (finish() keeps it), or -1 for another op.
  std::int64_t add(int rank, const OpRecord& op, std::int64_t clock_offset_ns,
                   std::uint64_t order = 0);
  std::int64_t add(int rank, const OpView& op, std::int64_t clock_offset_ns,
                   std::uint64_t order = 0);
  /// add() of a view kept past its step, whose lists (the bytes per peer) are no longer valid:
  /// `offrank` is what offrank_bytes_of() said of it while they were.
  std::int64_t add(int rank, const OpView& op, std::int64_t clock_offset_ns, std::uint64_t order,
                   std::optional<std::uint64_t> offrank);
  /// An op's off-rank bytes: the larger of what it sent to and received from the other ranks
  /// of its communicator, its own share (its comm_rank's entry) left out; nullopt where its file
  /// does not say (no bytes per peer or no comm_rank: imports, the profiler plugin, earlier
  /// files). Reads the op's lists.
  static std::optional<std::uint64_t> offrank_bytes_of(const OpView& op);
  /// The reading order of the `position`-th collective op of the `file`-th rank file.
  static std::uint64_t order_of(std::uint32_t file, std::uint64_t position);

  /// Before finish(): the instances added so far with each member's arrival, split among
  /// `owners` processes by a hash of (comm, seq), one buffer each, for the owners' merge().
  std::vector<std::string> partials(int owners) const;
  /// Adds instances from partials() of other matchers: the result is the same as adding their
  /// ops here, in their reading order, whatever order the buffers come in. Throws Error on a
  /// buffer that is not a partials() message of this build.
  void merge(std::string_view partials);

  /// Matches everything added. `world_size` sizes the per-rank table.
  void finish(int world_size);

  /// The instances. What add() and merge() give them (kind, size, bytes, arrivals, durations,
  /// ranks seen) is whole before finish(), which adds the mean duration and the waits caused.
  const std::vector<CollectiveInstance>& instances() const { return instances_; }
  const std::vector<RankWait>& rank_waits() const { return waits_; }

  /// Wait of `rank` at instance `i` (last start − own start); -1 if it did not take part.
  /// Valid after finish().
  std::int64_t wait_of(std::size_t i, int rank) const;
  /// The index in instances() of (comm, seq); -1 when no op of it was added.
  std::int64_t find(const std::string& comm, std::int64_t seq) const;

 private:
  template <class Op>
  std::int64_t add_op(int rank, const Op& op, std::int64_t clock_offset_ns, std::uint64_t order,
                      std::optional<std::uint64_t> offrank);
  struct Record {
    std::uint32_t instance;
    std::int32_t rank;
    std::int64_t start_ns;
  };
  // What merging needs beyond the instance: which op gave the algorithm, and the most bytes
  // any member sent (the instance keeps it only for alltoallv).
  struct Extra {
    std::uint64_t algo_order = 0;
    std::uint64_t max_bytes = 0;
  };
  std::pair<std::uint32_t, bool> find_or_add(std::string_view comm, std::int64_t seq);
  std::unordered_map<std::string, std::unordered_map<std::int64_t, std::uint32_t>> index_;
  // The communicators last looked up (find_or_add) and their entries in index_. A copied or
  // moved matcher starts without them: they point into the matcher they were found in.
  struct Recent {
    std::array<std::pair<std::string, std::unordered_map<std::int64_t, std::uint32_t>*>, 4>
        entries{};
    std::size_t next = 0;
    Recent() = default;
    Recent(const Recent&) {}
    Recent& operator=(const Recent&) {
      entries = {};
      next = 0;
      return *this;
    }
  };
  Recent recent_;
  std::vector<CollectiveInstance> instances_;
  std::vector<Extra> extras_;  // by instance
  std::vector<Record> records_;
  std::vector<RankWait> waits_;
};

}  // namespace commprof
