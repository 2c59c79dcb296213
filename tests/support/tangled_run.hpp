// SPDX-License-Identifier: MIT
// A run in which ranks disagree where a reduction's reading order decides (tests of the reduction
// shared among processes: tests/analysis/distributed_reduction_test.cpp on threads, and
// report_across_processes_tangled under the launcher, through tests/tools/write_test_run.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/tools/synthetic_timeline.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof::test {

// A run of 12 ranks in which ranks disagree where the reading order decides: on "world"
// instances of the first measured step the later ranks record other bytes (inconsistent: the first
// file's bytes stand); the tp all-gathers of odd ranks name NCCL's algorithm, rank 3's another one;
// "world" collectives of the last step are alltoallv with bytes growing by rank (the most stands)
// and received bytes too (the per-group table's balance, from each rank's summary), with bytes
// per peer and comm_rank on every rank but rank 5 at sequence numbers 2 mod 4 (so busbw is
// per-peer for some instances, (n-1)/n for others: their row mixed). Returns the files, by rank.
inline std::vector<std::string> write_tangled_run(const std::string& dir) {
  SyntheticSpec spec;
  spec.world_size = 12;
  spec.steps = 3;
  spec.warmup_steps = 1;
  spec.layers = 4;
  spec.tp_size = 4;
  spec.ranks_per_host = 4;
  spec.skew_ns = 211;
  std::vector<std::string> files;
  for (int r = 0; r < spec.world_size; ++r) {
    RankTimeline t = make_synthetic_rank(spec, r);
    for (StepRecord& step : t.steps) {
      for (OpRecord& op : step.ops) {
        if (op.category != Category::kComm) continue;
        if (op.comm == "world" && step.index == 1 && r >= 6) op.bytes += 64;
        if (op.comm.rfind("tp", 0) == 0 && r % 2 == 1) {
          op.algo = r == 3 ? "Tree" : "Ring";
          op.proto = "LL128";
        }
        if (op.comm == "world" && step.index == 3) {
          op.collective = "alltoallv";
          op.bytes = 1000 + static_cast<std::uint64_t>(r) * 10;
          op.recv_bytes = 900 + static_cast<std::uint64_t>(r) * 30;  // the per-group balance
          op.name += ".dispatch";  // and its row of its own, its phase matched across processes
          // Rank a sends rank b 80 + a + b bytes: what b receives from a.
          for (int p = 0; p < spec.world_size; ++p) {
            op.peer_send_bytes.push_back(80 + static_cast<std::uint64_t>(r + p));
            op.peer_recv_bytes.push_back(80 + static_cast<std::uint64_t>(r + p));
          }
          if (r != 5 || op.seq % 4 != 2) op.comm_rank = r;
        }
      }
    }
    files.push_back(write_rank_file(dir, t));
  }
  return files;
}

}  // namespace commprof::test
