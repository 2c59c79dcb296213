// SPDX-License-Identifier: MIT
#include "analysis/commands/rank_inputs.hpp"

#include "src/core/errors.hpp"

namespace commprof {

namespace po = boost::program_options;

void add_rank_inputs(po::options_description& hidden) {
  hidden.add_options()("inputs", po::value<std::vector<std::string>>(),
                       "result directories or rank files");
}

std::vector<std::string> rank_inputs(const po::variables_map& vm) {
  if (vm.count("inputs") == 0) {
    throw ConfigError("no input: give a result directory or rank-<R>.json files");
  }
  return vm["inputs"].as<std::vector<std::string>>();
}

}  // namespace commprof
