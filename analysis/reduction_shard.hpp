// SPDX-License-Identifier: MIT
// What one process's share of a shared reduction (distributed_reduction.hpp) sends process 0
// besides the ranks' summaries and the instance tables: the problems with its files, the op
// timings per name, the unfinished collectives of its ranks, and the waits at the collectives it
// owns. Process 0 merges every process's shard into the report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/collective_matching.hpp"
#include "analysis/reduction_wire.hpp"
#include "analysis/report.hpp"
#include "analysis/unfinished_collectives.hpp"

namespace commprof {

struct ReductionShard {
  struct Problem {
    std::uint32_t index = 0;  ///< the file's place in the job's reading order
    FileProblem problem;
  };
  /// Integer sums over the ops of one name and category (index_of(Category)), so that shards
  /// add up to what one process sums.
  struct Timing {
    int category = 0;
    std::string name;
    std::int64_t count = 0;
    std::int64_t total_ns = 0;
    std::int64_t overlapped_count = 0;
    std::int64_t overlapped_total_ns = 0;
  };
  std::vector<Problem> problems;
  std::vector<Timing> timings;
  UnfinishedCollectives::Ranks unfinished;
  std::vector<RankWait> waits;  ///< at the collectives this process owns; ranks with some only
};

template <class IO>
void transfer(IO& io, ReductionShard::Problem& p) {
  io(p.index, p.problem);
}

template <class IO>
void transfer(IO& io, ReductionShard::Timing& t) {
  io(t.category, t.name, t.count, t.total_ns, t.overlapped_count, t.overlapped_total_ns);
}

template <class IO>
void transfer(IO& io, ReductionShard& s) {
  io(s.problems, s.timings, s.unfinished, s.waits);
}

/// Every process's shard (wire::encode of a ReductionShard), merged: `rep` gets the problems in
/// file order and the op timings; `waits` (by rank, grown as needed) and `unfinished` the rest.
/// Throws Error on a message that is not a shard of this build.
void merge_shards(const std::vector<std::string>& shards, Report& rep, std::vector<RankWait>& waits,
                  UnfinishedCollectives& unfinished);

}  // namespace commprof
