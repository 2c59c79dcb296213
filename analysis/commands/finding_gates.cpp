// SPDX-License-Identifier: MIT
#include "analysis/commands/finding_gates.hpp"

#include <algorithm>
#include <iostream>

#include "src/core/errors.hpp"

namespace po = boost::program_options;

namespace commprof {
namespace {

// "finding:RULE" to RULE, or a ConfigError listing the rules.
std::string gate_rule(const std::string& gate) {
  constexpr std::string_view kPrefix = "finding:";
  const std::string rule = gate.rfind(kPrefix, 0) == 0 ? gate.substr(kPrefix.size()) : "";
  const std::vector<std::string_view> rules = finding_rules();
  if (std::find(rules.begin(), rules.end(), rule) != rules.end()) return rule;
  std::string known;
  for (std::string_view r : rules) known += (known.empty() ? "" : ", ") + std::string(r);
  throw ConfigError("invalid --fail-if '" + gate + "': expected finding:RULE, RULE one of " +
                    known);
}

}  // namespace

void define_finding_gates(po::options_description& visible) {
  visible.add_options()(
      "target-overlap", po::value<double>()->default_value(0.6, "0.6"),
      "the overlap (|COMM and COMP| / |COMM|, 0 to 1) below which the overlap_below_target "
      "finding fires")("fail-if", po::value<std::vector<std::string>>()->multitoken(),
                       "finding:RULE (e.g. finding:sync_wait): exit 3 when that finding fires "
                       "(rules: docs/analysis.md, Findings)");
}

FindingGates read_finding_gates(const po::variables_map& vm) {
  FindingGates gates;
  gates.options.target_overlap = vm["target-overlap"].as<double>();
  if (!(gates.options.target_overlap >= 0 && gates.options.target_overlap <= 1))
    throw ConfigError("--target-overlap must be between 0 and 1 (a fraction: 0.6 is 60%)");
  if (vm.count("fail-if") != 0) {
    for (const std::string& gate : vm["fail-if"].as<std::vector<std::string>>())
      gates.fail_if.push_back(gate_rule(gate));
  }
  return gates;
}

int apply_finding_gates(const Report& report, const FindingGates& gates, std::string_view command) {
  int fired = 0;
  for (const std::string& rule : gates.fail_if) {
    if (!finding_fired(report, rule)) continue;
    std::cerr << "commprof " << command << ": finding " << rule << " fired (--fail-if, exit 3)"
              << std::endl;
    ++fired;
  }
  return fired > 0 ? kExitRegression : kExitOk;
}

}  // namespace commprof
