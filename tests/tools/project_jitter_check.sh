#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs `commprof project` (the arguments) with the compute jitter drawn, and checks its figures
# against each other: the samples' 10th percentile at most 1 and their 90th at least 1 (each
# sample is a rank's compute over its own mean), the replays' 10th percentile step at most the
# mean step and that at most their 90th percentile, every figure above 0.
. "$(dirname "$0")/run_helpers.sh"
run_shown project_jitter_check.sh "$@"
printf '%s\n' "$out" | awk '
  /^# applied: the steps.* compute jitter .*10th to 90th percentile [0-9.]+ to [0-9.]+x\)/ {
    s = $0; sub(/.*10th to 90th percentile /, "", s); split(s, v, / to |x/)
    lo = v[1] + 0; hi = v[2] + 0; samples = 1
  }
  /^ step \(ms\) +[0-9.]+$/ { step = $NF + 0; steps++ }
  /^ one step, 10th pct \(ms\) +[0-9.]+$/ { p10 = $NF + 0; n10++ }
  /^ one step, 90th pct \(ms\) +[0-9.]+$/ { p90 = $NF + 0; n90++ }
  END {
    if (!samples || steps != 1 || n10 != 1 || n90 != 1) {
      print "FAILED: samples line " samples + 0 ", step rows " steps + 0 ", 10th " n10 + 0 ", 90th " n90 + 0
      exit 1
    }
    if (!(lo > 0 && lo <= 1 && 1 <= hi)) { print "FAILED: samples 10th " lo ", 90th " hi " around 1"; bad = 1 }
    if (!(p10 > 0 && p10 <= step && step <= p90)) {
      print "FAILED: step " step " ms not within its 10th to 90th percentile " p10 " to " p90; bad = 1
    }
    exit bad
  }' || { echo "project_jitter_check.sh: FAILED"; exit 1; }
echo "project_jitter_check.sh: OK"
