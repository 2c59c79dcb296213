// SPDX-License-Identifier: MIT
// Hand-built rank timelines for the tests of the step graph and of the reports that show it
// (tests/analysis/graph, tests/analysis/report): ops with their times and recorded waits, and
// the two-rank step whose critical path those tests work out by hand (times in ns; every rank's
// step starts at 0):
//
//   rank 0: a COMP [0,10]  ar COMM [10,30] after a  b COMP [12,20]  c COMP [30,40] after ar
//   rank 1: a COMP [0,20]  ar COMM [20,30] after a  b COMP [20,28]  c COMP [31,C] after ar
//
// ar is one allreduce of dp0 (seq 0, 1024 B) on both ranks; C is 36 unless a test moves it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/timeline/category.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof::test {

/// An op on its category's stream from `start` to `end`, after the ops `after` of its step.
inline OpRecord timed_op(const std::string& name, Category c, std::int64_t start, std::int64_t end,
                         std::vector<std::int32_t> after = {}) {
  OpRecord r;
  r.name = name;
  r.category = c;
  r.stream = category_name(c);
  r.start_ns = start;
  r.end_ns = end;
  r.after = std::move(after);
  return r;
}

/// "ar": an allreduce of `comm` (two ranks, 1024 B) with sequence number `seq`.
inline OpRecord allreduce_op(const std::string& comm, std::int64_t seq, std::int64_t start,
                             std::int64_t end, std::vector<std::int32_t> after = {}) {
  OpRecord r = timed_op("ar", Category::kComm, start, end, std::move(after));
  r.collective = "allreduce";
  r.comm = comm;
  r.comm_size = 2;
  r.seq = seq;
  r.bytes = 1024;
  return r;
}

/// Rank `rank` of a two-rank run on host "node<rank>" with one step (index 3) of `ops`.
inline RankTimeline one_step_rank(int rank, std::vector<OpRecord> ops) {
  RankTimeline t;
  t.rank = rank;
  t.world_size = 2;
  t.host = "node" + std::to_string(rank);
  StepRecord s;
  s.index = 3;
  for (const OpRecord& o : ops) s.end_ns = std::max(s.end_ns, o.end_ns);
  s.ops = std::move(ops);
  t.steps.push_back(std::move(s));
  return t;
}

/// The two-rank step above, rank 1's c ending at `rank1_c_end`.
inline std::vector<RankTimeline> two_rank_step(std::int64_t rank1_c_end = 36) {
  return {
      one_step_rank(
          0, {timed_op("a", Category::kComp, 0, 10), allreduce_op("dp0", 0, 10, 30, {0}),
              timed_op("b", Category::kComp, 12, 20), timed_op("c", Category::kComp, 30, 40, {1})}),
      one_step_rank(1, {timed_op("a", Category::kComp, 0, 20), allreduce_op("dp0", 0, 20, 30, {0}),
                        timed_op("b", Category::kComp, 20, 28),
                        timed_op("c", Category::kComp, 31, rank1_c_end, {1})})};
}

}  // namespace commprof::test
