// SPDX-License-Identifier: MIT
// Writes the hand-worked two-rank step of tests/support/hand_timelines.hpp as rank-0.json and
// rank-1.json in the directory given: the CLI's tests of `commprof whatif` read it and compare
// with the answers worked out by hand in tests/analysis/graph/step_graph_test.cpp.
#include <cstdio>
#include <exception>

#include "src/core/atomic_file.hpp"
#include "src/timeline/rank_file.hpp"
#include "support/hand_timelines.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  try {
    commprof::ensure_directory(argv[1]);
    for (const commprof::RankTimeline& t : commprof::test::two_rank_step()) {
      commprof::write_rank_file(argv[1], t, commprof::RankFileFormat::kJson);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
