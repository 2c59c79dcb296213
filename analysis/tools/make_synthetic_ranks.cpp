// SPDX-License-Identifier: MIT
// Writes rank-<R>.json files of a synthetic run (analysis/tools/synthetic_timeline.hpp), for the
// reducer benchmark and demos:
//   commprof_make_synthetic_ranks [--fault KIND:RANK] OUT_DIR RANKS OPS_PER_RANK [LAYERS]
//                                 [TP_SIZE] [json|zstd] [FIRST_RANK COUNT]
// FIRST_RANK and COUNT write only those ranks' files of the RANKS-rank run, so that several
// processes can write one large run in parts (scripts/reduce-bench.sh). --fault plants one fault
// (analysis/tools/synthetic_faults.hpp: skip, count, stopped, slow, no-recv), as `commprof
// diagnose`'s tests at 1,024 ranks use it.
#include <cstdio>
#include <exception>
#include <string>

#include "analysis/tools/synthetic_faults.hpp"
#include "src/core/atomic_file.hpp"
#include "src/timeline/rank_file.hpp"

int main(int argc, char** argv) {
  const char* fault_text = nullptr;
  if (argc > 2 && std::string(argv[1]) == "--fault") {
    fault_text = argv[2];
    argv[2] = argv[0];
    argv += 2;
    argc -= 2;
  }
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s [--fault KIND:RANK] OUT_DIR RANKS OPS_PER_RANK [LAYERS=10] [TP_SIZE=8] "
                 "[FORMAT=json|zstd] [FIRST_RANK=0 COUNT=RANKS]\n",
                 argv[0]);
    return 2;
  }
  try {
    const commprof::SyntheticFault fault = fault_text != nullptr
                                               ? commprof::parse_synthetic_fault(fault_text)
                                               : commprof::SyntheticFault{};
    commprof::SyntheticSpec spec;
    const std::string dir = argv[1];
    spec.world_size = std::stoi(argv[2]);
    const long ops = std::stol(argv[3]);
    spec.layers = argc > 4 ? std::stoi(argv[4]) : 10;
    spec.tp_size = argc > 5 ? std::stoi(argv[5]) : 8;
    const commprof::RankFileFormat format =
        commprof::parse_rank_file_format(argc > 6 ? argv[6] : "json");
    const int first = argc > 7 ? std::stoi(argv[7]) : 0;
    const int count = argc > 8 ? std::stoi(argv[8]) : spec.world_size - first;
    spec.warmup_steps = 1;
    spec.steps = static_cast<int>(ops / (3 * spec.layers)) - spec.warmup_steps;
    if (spec.world_size < 1 || spec.steps < 1 ||
        (spec.tp_size > 0 && spec.world_size % spec.tp_size) || first < 0 || count < 0 ||
        first + count > spec.world_size) {
      std::fprintf(stderr, "bad sizes: ranks %d, steps %d, tp %d, ranks %d..%d\n", spec.world_size,
                   spec.steps, spec.tp_size, first, first + count - 1);
      return 2;
    }
    commprof::ensure_directory(dir);
    for (int r = first; r < first + count; ++r) {
      commprof::write_rank_file(dir, commprof::make_faulty_rank(spec, fault, r), format);
    }
    std::printf("wrote %d rank files of %d ops to %s\n", count,
                3 * spec.layers * (spec.steps + spec.warmup_steps), dir.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
