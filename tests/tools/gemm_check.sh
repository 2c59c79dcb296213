#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs `commprof gemm ...` (the arguments, launcher included) and checks its figures against one
# another rather than against a pattern any number matches: rank 0's TFLOP/s is 2mnk over its
# printed time per GEMM (within the rounding of the printed figures), the summary's min and max
# are the ranks' rows' own, its mean their mean, and every rate is above 0 and below 1 TFLOP/s
# (the host backend's one CPU thread per rank; a unit slip of 10^3 lands outside).
. "$(dirname "$0")/run_helpers.sh"
run_shown gemm_check.sh "$@"
printf '%s\n' "$out" | awk '
  /^#   rank +[0-9]+  host / { r = $(NF - 1) + 0; rate[$3 + 0] = r; n++; sum += r
    if (n == 1 || r < lo) lo = r
    if (n == 1 || r > hi) hi = r
    next }
  /^gemm [0-9]+x[0-9]+x[0-9]+ / {
    split($2, s, "x"); flops = 2 * s[1] * s[2] * s[3]
    min = $5 + 0; mean = $7 + 0; max = $9 + 0
    us = $0; sub(/.*\(rank 0: /, "", us); sub(/ us per GEMM\)$/, "", us); us += 0
    found = 1
  }
  function off(a, b, rel) { d = a - b; if (d < 0) d = -d; return d > rel * (b < 0 ? -b : b) }
  END {
    if (!found || n == 0) { print "FAILED: no summary or no rank rows"; exit 1 }
    if (us <= 0) { print "FAILED: rank 0 took " us " us per GEMM"; exit 1 }
    want = flops / (us * 1e-6) / 1e12
    # The time is printed to 0.1 us, the rates to 4 digits.
    if (off(rate[0], want, 0.05 / us + 0.001)) {
      print "FAILED: rank 0 at " rate[0] " TFLOP/s, but 2mnk / " us " us = " want; bad = 1
    }
    if (off(min, lo, 0.001) || off(max, hi, 0.001)) {
      print "FAILED: summary min " min " max " max ", the rows " lo " to " hi; bad = 1
    }
    if (off(mean, sum / n, 0.001)) { print "FAILED: summary mean " mean ", the rows " sum / n; bad = 1 }
    if (lo <= 0 || hi >= 1) { print "FAILED: a rate outside (0, 1) TFLOP/s: " lo " to " hi; bad = 1 }
    exit bad
  }' || { echo "gemm_check.sh: FAILED"; exit 1; }
echo "gemm_check.sh: OK"
