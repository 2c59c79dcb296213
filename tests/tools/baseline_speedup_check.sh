#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs `commprof report RUN --baseline BASE` (the arguments) and checks its baseline line's
# figures against one another rather than against a pattern any number matches: the speed-up is
# the baseline's step over the run's (within the rounding of the printed 3 decimals), both steps
# are above 0, and the comparison table's row carries the same three figures.
. "$(dirname "$0")/run_helpers.sh"
run_shown baseline_speedup_check.sh "$@"
printf '%s\n' "$out" | awk '
  /^ step time: [0-9.]+ us, baseline [0-9.]+ us, speed-up [0-9.]+x$/ {
    step = $3 + 0; base = $6 + 0; x = $9; sub(/x$/, "", x); x += 0; found = 1; next }
  /^## Against the serialized baseline/ { table = 1; next }
  table && /^ source / { next }
  table && NF >= 4 && !row { rstep = $(NF - 5) + 0; rbase = $(NF - 4) + 0; rx = $(NF - 3) + 0; row = 1 }
  END {
    if (!found) { print "FAILED: no step time / baseline / speed-up line"; exit 1 }
    if (step <= 0 || base <= 0) { print "FAILED: steps " step " and " base " us"; exit 1 }
    want = base / step; d = x - want; if (d < 0) d = -d
    if (d > 0.0005 + 1e-9) { print "FAILED: speed-up " x "x, but " base " / " step " = " want; exit 1 }
    if (!row) { print "FAILED: no row in the baseline table"; exit 1 }
    if (rstep != step || rbase != base || rx != x) {
      print "FAILED: the table row says " rstep ", " rbase ", " rx "x"; exit 1 }
    print "baseline_speedup_check.sh: speed-up " x "x = " base " / " step " us"
  }'
