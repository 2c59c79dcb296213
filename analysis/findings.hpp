// SPDX-License-Identifier: MIT
// The report's findings: rules over the reduced Report (and the run's configuration where the
// files carry one) that each say what a problem costs per step, the evidence for it and one thing
// to change. The rules, their thresholds and formulas: docs/analysis.md, "Findings". A rule that
// needs data the files lack (per-op timing, compute ops, the link's peak, a run configuration) is
// listed as not evaluated, never fired on a guess.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/report.hpp"

namespace commprof {

class JsonObject;

/// The rules' thresholds; the defaults are the seed documents' targets.
struct FindingOptions {
  double target_overlap = 0.60;    ///< overlap_below_target: |COMM ∩ COMP| / |COMM| below this
  double max_exposed = 0.05;       ///< exposed_comm: exposed communication above this of the step
  double max_sync_wait = 0.10;     ///< sync_wait: waiting at collectives above this of the step
  double min_compute_busy = 0.85;  ///< compute_busy: |∪COMP| / step below this
  double bubble_margin = 0.10;     ///< pipeline_bubble: above the schedule's by this (of the step)
  double max_stage_imbalance = 1.10;  ///< stage_imbalance: max / mean stage compute above this
  double max_ep_imbalance = 1.10;     ///< ep_imbalance: busiest rank's received / mean above this
  double min_peak_fraction = 0.50;    ///< busbw_low: large messages below this of --peak-busbw
  std::uint64_t large_message_bytes = 16ull << 20;  ///< busbw_low: what counts as large
  int vocab_alignment = 64;  ///< vocab_alignment: the LM head's rows per rank a multiple of this
  double capacity_factor = 1.25;  ///< ep_imbalance: the cap it proposes (GShard's and Switch's)
};

/// What the rules need of a `commprof run`'s configuration (the rank files' "config"); known is
/// false for imports and plugin captures, which carry none.
struct RunFacts {
  bool known = false;
  std::string dp_mode;   ///< "ddp" or "zero"
  std::string schedule;  ///< "1f1b", "gpipe", "interleaved"
  int tp = 1;
  int pp = 1;
  int micro_batches = 1;
  int virtual_stages = 1;
  int layers = 0;
  int vocab = 0;             ///< the vocabulary as given (0: no ends)
  int vocab_multiple = 128;  ///< padded to a multiple of this × tp (Megatron's default 128)
  int experts = 0;
  double bucket_mb = 0.0;
  double capacity_factor = 0.0;
  std::vector<int> stage_layers;  ///< layers of each (virtual) stage
};

/// The facts of a run configuration (an empty or foreign one: known false).
RunFacts run_facts(const JsonObject& config);
/// Those of the rank file at `path` (its header only); known false where it cannot be read.
RunFacts run_facts_of_file(const std::string& path);

/// Evaluates every rule on `report` and sets report.findings: the fired ones, a hang first, then
/// by cost per step, most first; then those not evaluated.
void add_findings(Report& report, const RunFacts& facts, const FindingOptions& options = {});

/// Every rule's name, in the order docs/analysis.md lists them.
std::vector<std::string_view> finding_rules();
/// Whether `rule` fired in `report`.
bool finding_fired(const Report& report, std::string_view rule);

}  // namespace commprof
