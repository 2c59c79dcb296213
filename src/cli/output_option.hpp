// SPDX-License-Identifier: MIT
// One name for where a command writes. Every command that writes takes --out, -o and --output
// alike: each defines one long name (report, compare, whatif, project and the importers --output;
// run, bench and export-chakra --out), and the parser adds the other as a hidden spelling of it
// (earlier versions named a command's output one way only, four ways across commands).
#pragma once

#include <boost/program_options.hpp>
#include <string>

namespace commprof {

/// The long name a command defines for its output ("out" or "output") and the other spelling;
/// both empty where the command writes nowhere (or defines both itself).
struct OutputSpelling {
  std::string own;
  std::string other;
};

/// Finds the command's own name in `visible` and adds the other one to `hidden`.
OutputSpelling add_output_spelling(const boost::program_options::options_description& visible,
                                   boost::program_options::options_description& hidden);

/// After the command line and environment are stored: the other spelling's value under the
/// command's own name. ConfigError where both are given with different values.
void fold_output_spelling(const OutputSpelling& spelling,
                          boost::program_options::variables_map& vm);

}  // namespace commprof
