// SPDX-License-Identifier: MIT
// The positional inputs of the commands that read a run (report, whatif, export-chakra): result
// directories or rank files, at least one.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

namespace commprof {

/// Declares the hidden "inputs" option (define_positional makes every positional argument one:
/// `positional.add("inputs", -1)`).
void add_rank_inputs(boost::program_options::options_description& hidden);

/// The inputs given; throws ConfigError when there are none.
std::vector<std::string> rank_inputs(const boost::program_options::variables_map& vm);

}  // namespace commprof
