// SPDX-License-Identifier: MIT
#include "src/runtime/output_dir.hpp"

#include <filesystem>
#include <regex>

#include "src/core/atomic_file.hpp"
#include "src/core/errors.hpp"
#include "src/runtime/rank_context.hpp"

namespace commprof {

void prepare_output_directory(RankContext& ctx, const std::string& dir, bool force) {
  std::string problem;
  try {
    // Every rank: without a shared file system each writes into its own node's directory, and a
    // directory it cannot write (read-only, someone else's, a path through a regular file) must
    // stop the job now rather than after the first measured step.
    ensure_writable_directory(dir);
    if (ctx.rank() == 0 && !force) {
      static const std::regex kResult(
          R"((rank-[0-9]+\.json(\.zst)?|report\.[a-z]+|bench\.(json|csv)))");
      for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (std::regex_match(name, kResult)) {
          problem = "--out " + dir + " already holds results of an earlier run (" + name +
                    "); pass --force to overwrite them, or choose another directory";
          break;
        }
      }
    }
  } catch (const std::exception& e) {
    problem = e.what();
  }
  ctx.agree(problem.empty(), problem);
}

}  // namespace commprof
