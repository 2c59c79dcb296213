// SPDX-License-Identifier: MIT
// Faults planted in a synthetic run (synthetic_timeline.hpp) as a real run's rank files record
// them: a rank that times out (run --timeout) leaves the failed step out of its steps and says in
// its configuration which step failed ("failed_step"), why ("error") and what it had submitted
// without seeing it finish ("unfinished"); a rank stopped or killed records nothing of that step.
// The fault is in the last step, at a collective on "world" (so the spec needs tp_size 0 for the
// skip, count and stopped faults, whose every collective is on "world"):
//   skip:R     rank R never calls the step's last all-reduce and ends the step; the others wait
//              in it (`commprof diagnose` says "never launched on rank R");
//   count:R    every rank calls the step's first all-reduce, rank R with half the bytes; all
//              wait in it ("arguments differ");
//   stopped:R  rank R stops (SIGSTOP, SIGKILL) before the step's first all-reduce and writes
//              nothing of the step; the others wait in it ("no record from rank R");
//   slow:R     rank R's compute takes slow_factor times as long in every measured step; nothing
//              hangs ("straggler … rank R");
//   no-recv:R  a pipeline peer never posts its receive: the last step ends, on every rank, with a
//              transfer within its pair (ranks 2k and 2k + 1 on "pp<k>", the even one sending,
//              as a two-stage pipeline's activation); rank R (odd) ends the step without its
//              receive, and rank R − 1 waits in its send ("never launched on rank R: transfer
//              pp<k> R−1->R").
#pragma once

#include <string>

#include "analysis/tools/synthetic_timeline.hpp"

namespace commprof {

struct SyntheticFault {
  enum class Kind { kNone, kSkip, kCount, kStopped, kSlow, kNoRecv };
  Kind kind = Kind::kNone;
  int rank = -1;
  double slow_factor = 4.0;
};

/// "skip:R", "count:R", "stopped:R", "slow:R[:FACTOR]", "no-recv:R". Throws ConfigError naming the
/// text.
SyntheticFault parse_synthetic_fault(const std::string& text);

/// Rank `rank` of the run `spec` describes, with `fault` planted. Throws ConfigError when the
/// fault needs what the spec lacks (a second step, tp_size 0, a rank in range; for no-recv an
/// even number of ranks and an odd R).
RankTimeline make_faulty_rank(const SyntheticSpec& spec, const SyntheticFault& fault, int rank);

}  // namespace commprof
