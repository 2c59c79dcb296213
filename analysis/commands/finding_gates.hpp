// SPDX-License-Identifier: MIT
// The findings' options that `commprof report` and `commprof run` share: --target-overlap (a
// rule's threshold) and --fail-if finding:RULE (exit 3 when that rule fires), so a CI job can
// gate on a run as it gates on a report of its files, with the same words.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.hpp"
#include "analysis/report.hpp"

namespace commprof {

struct FindingGates {
  FindingOptions options;
  std::vector<std::string> fail_if;  ///< rules whose firing exits 3
};

/// Declares --target-overlap and --fail-if.
void define_finding_gates(boost::program_options::options_description& visible);
/// Reads them; throws ConfigError naming a gate that is not finding:RULE of a known rule, or a
/// target overlap outside [0, 1].
FindingGates read_finding_gates(const boost::program_options::variables_map& vm);
/// kExitRegression (3) when a gate's rule fired in `report`, each said on stderr as `command`'s
/// (so a CI log shows it whatever the format and destination); else kExitOk.
int apply_finding_gates(const Report& report, const FindingGates& gates, std::string_view command);

}  // namespace commprof
