// SPDX-License-Identifier: MIT
#include "analysis/distributed_reduction.hpp"

#include <map>
#include <memory>
#include <utility>

#include "analysis/collective_matching.hpp"
#include "analysis/instance_tables.hpp"
#include "analysis/reduction_shard.hpp"
#include "analysis/wire_codec.hpp"

namespace commprof {
namespace {

constexpr std::size_t kSummaryBatches = 8;

using Forced = std::vector<std::pair<std::uint32_t, std::uint32_t>>;  // (file, kept file)

std::unique_ptr<Reducer> reduce_block(const std::vector<std::string>& files, std::size_t begin,
                                      std::size_t end, const ReduceOptions& options,
                                      const Forced& forced, FileStepSink* also) {
  auto reducer = std::make_unique<Reducer>(options);
  reducer->also_stream_to(also);
  for (const auto& [index, kept] : forced) reducer->treat_as_duplicate(index, kept, files[kept]);
  for (std::size_t i = begin; i < end; ++i) {
    reducer->set_file_index(static_cast<std::uint32_t>(i));
    try {
      reducer->add_file(files[i]);
    } catch (const std::exception& e) {
      reducer->add_problem(files[i], e.what());
    }
  }
  return reducer;
}

// Which file each rank is kept from is a question of the whole list: the first valid file that
// holds the rank, wherever it was read. Process 0 hears every valid file's rank and answers,
// for each file that is not the one its rank is kept from, which one is.
std::map<std::uint32_t, std::uint32_t> kept_files(const Reducer& reducer,
                                                  ReduceExchange& exchange) {
  using Outcomes = std::vector<std::pair<std::uint32_t, int>>;        // (file, its rank)
  using Kept = std::vector<std::pair<std::uint32_t, std::uint32_t>>;  // (file, kept file)
  Outcomes mine;
  for (const Reducer::FileOutcome& o : reducer.outcomes()) mine.emplace_back(o.index, o.rank);
  Kept answer;
  const std::vector<std::string> all = exchange.gather(wire::encode(mine));
  if (exchange.rank() == 0) {
    std::map<int, std::uint32_t> first;  // rank -> first file (blocks come in file order)
    Outcomes outcomes;
    for (const std::string& bytes : all) {
      for (const auto& [index, rank] : wire::decode<Outcomes>(bytes)) {
        first.try_emplace(rank, index);
        outcomes.emplace_back(index, rank);
      }
    }
    for (const auto& [index, rank] : outcomes) {
      if (first[rank] != index) answer.emplace_back(index, first[rank]);
    }
  }
  std::map<std::uint32_t, std::uint32_t> kept;
  for (const auto& [index, kept_index] :
       wire::decode<Kept>(exchange.broadcast(wire::encode(answer)))) {
    kept[index] = kept_index;
  }
  return kept;
}

}  // namespace

Report reduce_rank_files_across(const std::vector<std::string>& files, const ReduceOptions& options,
                                ReduceExchange& exchange, FileStepSink* also) {
  const std::size_t n = files.size();
  const auto share = static_cast<std::size_t>(exchange.rank());
  const auto processes = static_cast<std::size_t>(exchange.size());
  const std::size_t begin = n * share / processes;
  const std::size_t end = n * (share + 1) / processes;
  std::unique_ptr<Reducer> reducer = reduce_block(files, begin, end, options, {}, also);
  // A rank found in two files is kept from the first; where that first file was read by another
  // process, this share is read again knowing it (rare: only lists that name a rank twice).
  const std::map<std::uint32_t, std::uint32_t> kept = kept_files(*reducer, exchange);
  Forced forced;
  bool again = false;
  for (const Reducer::FileOutcome& o : reducer->outcomes()) {
    const auto it = kept.find(o.index);
    const std::uint32_t kept_index = it == kept.end() ? o.index : it->second;
    if (kept_index != o.index) forced.emplace_back(o.index, kept_index);
    again = again || kept_index != o.kept_index;
  }
  if (again) reducer = reduce_block(files, begin, end, options, forced, nullptr);
  Report report = finish_across(*reducer, options, exchange);
  if (exchange.rank() == 0) report.inputs = files;
  return report;
}

Report finish_across(Reducer& reducer, const ReduceOptions& options, ReduceExchange& exchange) {
  CollectiveMatcher owned;
  {
    const std::vector<std::string> from =
        exchange.all_to_all(reducer.collective_partials(exchange.size()));
    reducer.drop_collectives();
    for (const std::string& bytes : from) owned.merge(bytes);
  }
  owned.finish(0);
  // The instances stay with their owners: process 0 gets their tables, not the instances.
  Report report;
  report.peak_busbw_gbps = options.peak_busbw_gbps;
  const InstanceFindings found = tabulate_instances(owned.instances(), report, exchange);
  ReductionShard shard = reducer.shard();
  for (const RankWait& w : owned.rank_waits()) {
    if (w.collectives > 0) shard.waits.push_back(w);
  }
  owned = CollectiveMatcher{};
  // The ranks' summaries (each with a point per step) in batches, read as they come.
  const std::size_t ranks = reducer.rank_count();
  for (std::size_t batch = 0; batch < kSummaryBatches; ++batch) {
    const std::string mine =
        reducer.summaries(batch * ranks / kSummaryBatches, (batch + 1) * ranks / kSummaryBatches);
    for (const std::string& bytes : exchange.gather(mine)) {
      Reducer::read_summaries(bytes, report.ranks);
    }
  }
  const std::vector<std::string> shards = exchange.gather(wire::encode(shard));
  if (exchange.rank() != 0) return Report{};
  Reducer::merge_shards(report, shards, found);
  return report;
}

}  // namespace commprof
