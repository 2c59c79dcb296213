// SPDX-License-Identifier: MIT
#include "analysis/distributed_reduction.hpp"

#include <algorithm>
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
// Files are handed out in chunks of 1/kChunksPerProcess of an even share: small enough that the
// processes finish within a chunk of each other, large enough that claiming costs nothing
// beside reading.
constexpr std::size_t kChunksPerProcess = 32;

using Forced = std::vector<std::pair<std::uint32_t, std::uint32_t>>;  // (file, kept file)
using Range = std::pair<std::size_t, std::size_t>;                    // files [first, last)

void add_one(Reducer& reducer, const std::vector<std::string>& files, std::size_t i) {
  reducer.set_file_index(static_cast<std::uint32_t>(i));
  try {
    reducer.add_file(files[i]);
  } catch (const std::exception& e) {
    reducer.add_problem(files[i], e.what());
  }
}

// Files are claimed a chunk at a time from a counter every process shares, so a process that
// reads faster (a quieter core, a nearer disk) reads more, and all are done at about the same
// time: with blocks fixed in advance, the slowest of 16 processes on one 16-core machine took 1.47
// times the quickest's time over as many files of the same size. A process reads its chunks in the
// order it claimed them, which is the files' order, as the reducer needs.
std::unique_ptr<Reducer> reduce_claimed(const std::vector<std::string>& files,
                                        const ReduceOptions& options, ReduceExchange& exchange,
                                        FileStepSink* also, std::vector<Range>& read) {
  auto reducer = std::make_unique<Reducer>(options);
  reducer->also_stream_to(also);
  const std::size_t n = files.size();
  const std::size_t processes = static_cast<std::size_t>(exchange.size());
  const std::size_t chunk = std::max<std::size_t>(1, n / (processes * kChunksPerProcess));
  const std::unique_ptr<ClaimCounter> counter = exchange.counter();
  for (;;) {
    const std::uint64_t first = counter->claim(chunk);
    if (first >= n) break;
    const Range range{static_cast<std::size_t>(first),
                      std::min(n, static_cast<std::size_t>(first) + chunk)};
    read.push_back(range);
    for (std::size_t i = range.first; i < range.second; ++i) add_one(*reducer, files, i);
  }
  return reducer;
}

// The same files read again, knowing which files' ranks are kept from another's.
std::unique_ptr<Reducer> reduce_again(const std::vector<std::string>& files,
                                      const std::vector<Range>& read, const ReduceOptions& options,
                                      const Forced& forced) {
  auto reducer = std::make_unique<Reducer>(options);
  for (const auto& [index, kept] : forced) reducer->treat_as_duplicate(index, kept, files[kept]);
  for (const Range& range : read) {
    for (std::size_t i = range.first; i < range.second; ++i) add_one(*reducer, files, i);
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
    Outcomes outcomes;
    for (const std::string& bytes : all) {
      for (const auto& outcome : wire::decode<Outcomes>(bytes)) outcomes.push_back(outcome);
    }
    // In file order: the processes' chunks interleave.
    std::sort(outcomes.begin(), outcomes.end());
    std::map<int, std::uint32_t> first;  // rank -> first file
    for (const auto& [index, rank] : outcomes) first.try_emplace(rank, index);
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
  std::vector<Range> read;
  std::unique_ptr<Reducer> reducer = reduce_claimed(files, options, exchange, also, read);
  // A rank found in two files is kept from the first; where that first file was read by another
  // process, this process's files are read again knowing it (rare: only lists that name a rank
  // twice).
  const std::map<std::uint32_t, std::uint32_t> kept = kept_files(*reducer, exchange);
  Forced forced;
  bool again = false;
  for (const Reducer::FileOutcome& o : reducer->outcomes()) {
    const auto it = kept.find(o.index);
    const std::uint32_t kept_index = it == kept.end() ? o.index : it->second;
    if (kept_index != o.index) forced.emplace_back(o.index, kept_index);
    again = again || kept_index != o.kept_index;
  }
  if (again) reducer = reduce_again(files, read, options, forced);
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
