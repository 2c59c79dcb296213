// SPDX-License-Identifier: MIT
// Rank files of a run whose report the tests know by hand, for `commprof report` end to end:
//   write_test_run slow-rank DIR   4 ranks of a dp step in which rank 2's compute is slow (below)
//   write_test_run tangled DIR     12 ranks that disagree where the reading order decides
//                                  (tests/support/tangled_run.hpp), for the reduction shared
//                                  among processes under the launcher
//
// slow-rank: one warm-up step (0) and two measured ones (1, 2), each rank's step from 0 to 455 us
// after its start (steps 1 ms apart, one host, every clock offset 0). Each rank runs, on its COMP
// stream, embed [0,200], fwd, bwd, then the all-reduce ar (dp0, seq = the step, 1 MiB) on its
// COMM stream after bwd, then opt [450,455] after ar. Ranks 0, 1 and 3 run fwd [200,210] and
// bwd [210,230] and enter ar at 230; rank 2 (what `run --slow-rank 2:8` makes of a rank) enters
// it at 440, and every rank's ar ends at 450:
//   step 1: rank 2's fwd [200,280], bwd [280,440];  step 2: fwd [200,400], bwd [400,440].
// So rank 2 arrives last at every ar, 440 − 230 = 210 us late, and the others wait 3 × 210 us
// per instance. Of its stretch before ar, the op furthest beyond the same op's mean on the other
// ranks is, in step 1, bwd (160 − 20 = 140 us; embed is the longest op, 0 beyond), and in step
// 2, fwd (200 − 10 = 190 us; bwd 40 − 20 = 20). The critical path is 455 us: rank 2's embed,
// fwd, bwd and ar (its last 10 us), then opt; COMP 445 us, COMM 10 us, no host gap.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "src/core/atomic_file.hpp"
#include "src/timeline/rank_file.hpp"
#include "support/tangled_run.hpp"

namespace {

using commprof::Category;
using commprof::OpRecord;

constexpr std::int64_t kUs = 1000;

OpRecord op(const std::string& name, Category c, std::int64_t base, std::int64_t start_us,
            std::int64_t end_us, std::vector<std::int32_t> after = {}) {
  OpRecord r;
  r.name = name;
  r.category = c;
  r.stream = commprof::category_name(c);
  r.start_ns = base + start_us * kUs;
  r.end_ns = base + end_us * kUs;
  r.after = std::move(after);
  return r;
}

void write_slow_rank_run(const std::string& dir) {
  commprof::ensure_directory(dir);
  for (int rank = 0; rank < 4; ++rank) {
    commprof::RankTimeline t;
    t.rank = rank;
    t.world_size = 4;
    t.host = "node0";
    t.backend = "host";
    for (int s = 0; s < 3; ++s) {
      const std::int64_t base = 1'000'000 + s * 1'000'000;  // 1 ms apart
      // fwd's and bwd's ends on this rank: ranks 0, 1, 3 alike; rank 2 as the step says
      std::int64_t fwd_end = 210, bwd_end = 230;
      if (rank == 2) {
        fwd_end = s == 2 ? 400 : 280;
        bwd_end = 440;
      }
      commprof::StepRecord step;
      step.index = s;
      step.warmup = s == 0;
      step.start_ns = base;
      step.end_ns = base + 455 * kUs;
      step.ops.push_back(op("embed", Category::kComp, base, 0, 200));
      step.ops.push_back(op("fwd", Category::kComp, base, 200, fwd_end));
      step.ops.push_back(op("bwd", Category::kComp, base, fwd_end, bwd_end));
      OpRecord ar = op("ar", Category::kComm, base, bwd_end, 450, {2});
      ar.collective = "allreduce";
      ar.comm = "dp0";
      ar.comm_size = 4;
      ar.seq = s;
      ar.bytes = 1 << 20;
      step.ops.push_back(ar);
      step.ops.push_back(op("opt", Category::kComp, base, 450, 455, {3}));
      t.steps.push_back(step);
    }
    commprof::write_rank_file(dir, t);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc == 3 ? argv[1] : "";
  if (what != "slow-rank" && what != "tangled") {
    std::fprintf(stderr, "usage: %s slow-rank|tangled DIR\n", argv[0]);
    return 2;
  }
  try {
    if (what == "slow-rank") {
      write_slow_rank_run(argv[2]);
    } else {
      commprof::ensure_directory(argv[2]);
      commprof::test::write_tangled_run(argv[2]);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_test_run: %s\n", e.what());
    return 1;
  }
  return 0;
}
