#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs `commprof project ... --validate` (the arguments, launcher included) and checks what its
# validation table says: the step and exposed-communication rows each print a predicted and a
# measured time (ms) and an error that is (predicted - measured) / measured of those two figures
# (within the rounding of the printed figures), and the overlap row its difference in
# percentage points. The error itself is not held to any bound: it is a benchmark, not a test.
# The communication library's own estimate follows: on the host backend, which has no cost
# model, one line saying so and why; on a GPU, its table per communicator kind.
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
if [ "$status" -ne 0 ]; then
  echo "projection_error_check.sh: FAILED: the command exited with $status"
  exit 1
fi
printf '%s\n' "$out" | awk '
  /^## Validation/ { in_table = 1; next }
  in_table && /^ (step \(ms\)|exposed comm \(ms\)) / {
    pred = $(NF - 2); meas = $(NF - 1); err = $NF; sub(/%$/, "", err)
    if (meas + 0 <= 0) { print "FAILED: measured " meas " in: " $0; bad = 1; next }
    want = 100 * (pred - meas) / meas
    # The figures are printed to 0.001 ms: allow what that rounding can move the ratio, and the
    # error'"'"'s own 0.1 %.
    slack = 0.06 + 100 * 0.0011 * (1 + (pred > 0 ? pred / meas : 0)) / meas
    d = err - want; if (d < 0) d = -d
    if (d > slack) {
      print "FAILED: error " err "% but (" pred " - " meas ") / " meas " = " want "%"; bad = 1
    }
    rows++
  }
  in_table && /^ overlap \(%\) / {
    if ($NF != "pp") { print "FAILED: overlap row without its difference in pp: " $0; bad = 1 }
    pred = $(NF - 3); meas = $(NF - 2); diff = $(NF - 1)
    d = diff - (pred - meas); if (d < 0) d = -d
    if (d > 0.15) { print "FAILED: overlap difference " diff " pp but " pred " - " meas; bad = 1 }
    rows++
  }
  END {
    if (rows != 3) { print "FAILED: " rows + 0 " of the 3 validation rows found"; exit 1 }
    exit bad
  }' || { echo "projection_error_check.sh: FAILED"; exit 1; }
if ! printf '%s\n' "$out" | grep -Eq "^# the library's own estimate: none \(.+\)$|^## Collectives per communicator kind \(one step\): the projection, "; then
  echo "projection_error_check.sh: FAILED: neither the library's estimate nor why it has none"
  exit 1
fi
echo "projection_error_check.sh: OK"
