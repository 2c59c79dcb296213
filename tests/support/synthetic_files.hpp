// SPDX-License-Identifier: MIT
// A synthetic run's rank files (analysis/tools/synthetic_timeline.hpp) for the reduction's tests.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/tools/synthetic_timeline.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof::test {

/// One rank file per rank of `spec`, written into `dir` (emptied first); their paths, in rank
/// order.
inline std::vector<std::string> write_synthetic_files(const std::string& dir,
                                                      const SyntheticSpec& spec) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;
  for (int r = 0; r < spec.world_size; ++r) {
    files.push_back(write_rank_file(dir, make_synthetic_rank(spec, r)));
  }
  return files;
}

}  // namespace commprof::test
