// SPDX-License-Identifier: MIT
// The options every `commprof import-*` command shares: the input files (one per rank),
// -o DIR, --rules FILE, --rank N and --rank-file-format.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "analysis/nsys_rules.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {

struct ImportArgs {
  std::vector<std::string> inputs;
  std::string output;
  std::string rules_path;
  int rank = -1;                                  ///< -1: from the files, else their order
  RankFileFormat format = RankFileFormat::kJson;  ///< --rank-file-format

  /// Declares the options; `recorded_rank` names where a file records its rank (the rank
  /// policy of both importers: analysis/import_rank.hpp).
  static void define(boost::program_options::options_description& visible,
                     boost::program_options::options_description& hidden,
                     const std::string& recorded_rank);
  /// Reads them; throws ConfigError naming what is missing or wrong. `inputs_are` names the
  /// inputs ("nsys SQLite exports"), `one_input` one of them ("file").
  void read(const boost::program_options::variables_map& vm, const std::string& inputs_are,
            const std::string& one_input);
  /// nullptr (the built-in rules) without --rules; else `storage`, loaded from the file.
  const RuleSet* rules(RuleSet& storage) const;
};

}  // namespace commprof
