// SPDX-License-Identifier: MIT
#include "analysis/reduction_shard.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "analysis/reduction_wire.hpp"
#include "analysis/saturating_sum.hpp"
#include "analysis/wire_codec.hpp"
#include "src/core/errors.hpp"

namespace commprof {

void merge_shards(const std::vector<std::string>& shards, Report& rep, std::vector<RankWait>& waits,
                  UnfinishedCollectives& unfinished) {
  std::vector<std::pair<std::uint32_t, FileProblem>> problems;
  std::map<std::pair<int, std::string>, std::array<std::int64_t, 4>> timings;
  for (const std::string& bytes : shards) {
    ReductionShard shard = wire::decode<ReductionShard>(bytes);
    for (ReductionShard::Problem& p : shard.problems) {
      problems.emplace_back(p.index, std::move(p.problem));
    }
    for (const ReductionShard::Timing& t : shard.timings) {
      std::array<std::int64_t, 4>& sum = timings[{t.category, t.name}];
      sum[0] += t.count;
      add_saturating(sum[1], t.total_ns);
      sum[2] += t.overlapped_count;
      add_saturating(sum[3], t.overlapped_total_ns);
    }
    unfinished.add(shard.unfinished);
    for (const RankWait& part : shard.waits) {
      if (part.rank < 0) throw Error("reduction message names rank " + std::to_string(part.rank));
      const auto rank = static_cast<std::size_t>(part.rank);
      if (rank >= waits.size()) {
        const std::size_t old = waits.size();
        waits.resize(rank + 1);
        for (std::size_t r = old; r < waits.size(); ++r) waits[r].rank = static_cast<int>(r);
      }
      // Waits are never negative, so saturating sums give the same total in any order.
      RankWait& w = waits[rank];
      w.collectives += part.collectives;
      add_saturating(w.wait_ns, part.wait_ns);
      add_saturating(w.wait_caused_ns, part.wait_caused_ns);
      w.times_last += part.times_last;
      w.times_first += part.times_first;
    }
  }
  // Problems in file order, as one process would have met them.
  std::stable_sort(problems.begin(), problems.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& p : problems) rep.problems.push_back(std::move(p.second));
  for (const auto& [key, t] : timings) {
    OpTiming& o = rep.op_timings[key];
    o.count = t[0];
    o.total_ns = static_cast<double>(t[1]);
    o.overlapped_count = t[2];
    o.overlapped_total_ns = static_cast<double>(t[3]);
  }
}

}  // namespace commprof
