// SPDX-License-Identifier: MIT
// The offline reducer: rank files in, one Report out. Rank files are read one at a time and
// summarised before the next is read, so memory grows with ranks × collectives, not with ops.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/collective_matching.hpp"
#include "analysis/report.hpp"
#include "analysis/unfinished_collectives.hpp"

namespace commprof {

struct InstanceFindings;
struct ReductionShard;

struct ReduceOptions {
  double peak_busbw_gbps = 0.0;  ///< 0: no "% of peak" column
  /// Keep each rank's per-step points (RankSummary::step_points). Only the HTML report draws
  /// them (its trend, its timeline's step), and the report's process holds every rank's: 32 B
  /// a step, 350 MB at 16,384 ranks of 667 steps. No other figure depends on them.
  bool step_points = true;
};

/// A second reader of the files a Reducer streams (the critical path's packer): one read of
/// each file serves both. Told each file's place in the reading order before its header, then
/// handed the same calls as the reducer's own sink. It must not throw: a problem of its own is
/// its to keep, not the file's.
class FileStepSink : public RankStepSink {
 public:
  virtual void begin_file(std::uint32_t index) = 0;
};

/// Accumulates rank timelines one by one (stage 2 of the reduction).
class Reducer {
 public:
  explicit Reducer(ReduceOptions options);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;
  /// Adds one rank. A second file for a rank already added becomes a problem, not an error.
  void add(RankTimeline timeline, const std::string& source);
  /// Reads and adds one rank file step by step, never holding its whole timeline (the fast
  /// path of reduce_rank_files). Throws Error naming the file and where in it the problem is,
  /// like read_rank_file; the reducer is then unchanged (nothing of the file is kept).
  void add_file(const std::string& path);
  /// Hands every file add_file reads to `sink` as well (nullptr: to none).
  void also_stream_to(FileStepSink* sink) { also_ = sink; }
  /// Records a file that could not be read; it is named in the report.
  void add_problem(const std::string& file, const std::string& message);
  Report finish();

  // --- One process's share of a distributed reduction (distributed_reduction.hpp) -------------
  /// Where the next file or timeline stands in the job's reading order (its index in the list
  /// of files): it orders problems, duplicates and collective instances across processes.
  /// Without it, files and timelines are numbered in the order they are added.
  void set_file_index(std::uint32_t index) {
    file_index_ = index;
    index_given_ = true;
  }
  /// The file at `index` holds a rank already read from the file at `kept_index` (by another
  /// process): it is read only to check it, and named as a duplicate of `kept_source`.
  void treat_as_duplicate(std::uint32_t index, std::uint32_t kept_index, std::string kept_source);
  /// A file read whole and found valid: its rank, and the index of the file that rank is kept
  /// from (its own, or the earlier one it duplicates).
  struct FileOutcome {
    std::uint32_t index = 0;
    int rank = 0;
    std::uint32_t kept_index = 0;
  };
  const std::vector<FileOutcome>& outcomes() const { return outcomes_; }
  /// Instead of finish(): the collectives added, one buffer per owner process (by a hash of
  /// (comm, seq)), for the owners' CollectiveMatcher::merge.
  std::vector<std::string> collective_partials(int owners) const;
  /// After collective_partials(): frees what matching the collectives took here.
  void drop_collectives();
  /// Instead of finish(): a message of the summaries of the ranks read here, [begin, end) of
  /// them (sent in batches, so that process 0 never holds every one twice), for read_summaries.
  std::size_t rank_count() const { return report_.ranks.size(); }
  std::string summaries(std::size_t begin, std::size_t end) const;
  /// Appends the summaries a summaries() message holds; throws Error on another message.
  static void read_summaries(std::string_view bytes, std::vector<RankSummary>& out);
  /// Instead of finish(): everything else this share contributes (problems, op timings,
  /// unfinished collectives), for merge_shards; its waits are the owners' to fill in.
  ReductionShard shard() const;
  /// Completes `rep` (its ranks read by read_summaries, its instance tables filled by
  /// tabulate_instances, which found `found`) into the report one Reducer would have built from
  /// every file: `shards` are each process's shard() with its owned matcher's waits, encoded.
  static void merge_shards(Report& rep, const std::vector<std::string>& shards,
                           const InstanceFindings& found);

 private:
  class Staging;
  friend class Staging;
  ReduceOptions options_;
  Report report_;
  std::vector<std::uint32_t> problem_index_;  // by problem: the file's place in reading order
  std::uint32_t file_index_ = 0;
  bool index_given_ = false;
  std::uint32_t next_index_ = 0;  // the next file's, unless given
  std::vector<FileOutcome> outcomes_;
  std::map<std::uint32_t, std::pair<std::uint32_t, std::string>> forced_duplicates_;
  CollectiveMatcher matcher_;
  UnfinishedCollectives unfinished_;
  std::unique_ptr<Staging> staging_;
  FileStepSink* also_ = nullptr;
};

/// Reads and reduces `files`; an unreadable or malformed one is a problem in the report.
/// `observer`, if set, sees every timeline read (e.g. the Chrome trace writer): each file is then
/// read whole (read_rank_file); without one, files are streamed (Reducer::add_file). Both give
/// the same report.
/// `also`, if set (and without an observer), reads every streamed file too.
Report reduce_rank_files(const std::vector<std::string>& files, const ReduceOptions& options,
                         const std::function<void(const RankTimeline&)>& observer = {},
                         FileStepSink* also = nullptr);

/// Adds the comparison with a baseline run (its Report) to `run`.
void compare_with_baseline(Report& run, const Report& baseline, const std::string& source);

}  // namespace commprof
