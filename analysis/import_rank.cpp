// SPDX-License-Identifier: MIT
#include "analysis/import_rank.hpp"

namespace commprof {

ImportRank import_rank(int forced, const std::optional<ImportRank>& recorded, int position) {
  if (forced >= 0) return {forced, "--rank"};
  if (recorded) return *recorded;
  return {position, kRankFromFileOrder};
}

std::string import_rank_help(const std::string& recorded) {
  return "the rank of the one file given (default: " + recorded +
         "; else the files' order: one file alone is rank 0)";
}

}  // namespace commprof
