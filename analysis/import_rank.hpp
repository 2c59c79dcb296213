// SPDX-License-Identifier: MIT
// Which rank an imported file holds: the one policy of import-nsys and import-torch.
//   1. --rank N names the rank of the one file given;
//   2. else the rank the file records wins (import-nsys: the launcher's variables nsys recorded,
//      then the file name's _<rank> suffix; import-torch: the trace's distributedInfo);
//   3. else the file's position among the inputs: one file alone is rank 0, several files take
//      their order on the command line. Each file's summary line says where its rank came from.
#pragma once

#include <optional>
#include <string>

namespace commprof {

/// A rank and where it came from ("--rank", "OMPI_COMM_WORLD_RANK", "file name",
/// "distributedInfo", "file order").
struct ImportRank {
  int rank = 0;
  std::string source;
};

/// What import_rank() says of a file whose rank comes from its position.
inline constexpr const char* kRankFromFileOrder = "file order";

/// The rank of the input at `position` (0-based) among the inputs: `forced` (>= 0: --rank),
/// else `recorded` (what the file says), else its position.
ImportRank import_rank(int forced, const std::optional<ImportRank>& recorded, int position);

/// The text of --rank's help, the same for both importers: `recorded` names what the files
/// record ("the trace's distributedInfo").
std::string import_rank_help(const std::string& recorded);

}  // namespace commprof
