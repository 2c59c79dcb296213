// SPDX-License-Identifier: MIT
#include "analysis/commands/import_options.hpp"

#include "analysis/import_rank.hpp"
#include "src/core/errors.hpp"

namespace po = boost::program_options;

namespace commprof {

void ImportArgs::define(po::options_description& visible, po::options_description& hidden,
                        const std::string& recorded_rank) {
  visible.add_options()("output,o", po::value<std::string>(),
                        "directory for rank-<R>.json (created if missing)")(
      "rules", po::value<std::string>(),
      "classification rules file replacing the built-in ones (format: "
      "analysis/nsys_rules_default.txt; import-nsys --print-rules shows them)")(
      "rank", po::value<int>(), import_rank_help(recorded_rank).c_str())(
      "rank-file-format", po::value<std::string>()->default_value("json"),
      "json (rank-<R>.json) or zstd (the same JSON lines as zstd frames, rank-<R>.json.zst)");
  hidden.add_options()("inputs", po::value<std::vector<std::string>>(), "input files");
}

void ImportArgs::read(const po::variables_map& vm, const std::string& inputs_are,
                      const std::string& one_input) {
  if (vm.count("inputs") == 0) throw ConfigError("no input: give the " + inputs_are);
  inputs = vm["inputs"].as<std::vector<std::string>>();
  if (vm.count("output") == 0) throw ConfigError("no output directory: give -o DIR");
  output = vm["output"].as<std::string>();
  if (vm.count("rules") != 0) rules_path = vm["rules"].as<std::string>();
  format = parse_rank_file_format(vm["rank-file-format"].as<std::string>());
  if (vm.count("rank") != 0) {
    rank = vm["rank"].as<int>();
    if (rank < 0) throw ConfigError("--rank must not be negative");
    if (inputs.size() != 1) {
      throw ConfigError("--rank names the rank of one " + one_input + "; " +
                        std::to_string(inputs.size()) + " were given");
    }
  }
}

const RuleSet* ImportArgs::rules(RuleSet& storage) const {
  if (rules_path.empty()) return nullptr;
  storage = RuleSet::from_file(rules_path);
  return &storage;
}

}  // namespace commprof
