#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs `commprof project ... --validate` (the arguments, launcher included) and checks what its
# validation table says: the step and exposed-communication rows each print a predicted and a
# measured time (ms) and an error that is (predicted - measured) / measured of those two figures
# (within the rounding of the printed figures), and the overlap row its difference in
# percentage points. With --max-error PCT first, the step's error is held to PCT % either way;
# with --validate-runs N, against the validation run nearest the prediction, and a spread of those
# runs wider than PCT (the spread line's "slowest step X% above the fastest") widens the bound to
# X: the noise the target layout shows on its own (on a shared 2-core machine, runs a minute
# apart differed by 2x) cannot be asked of the projection. Projected onto its own layout (the
# target's layout is the measured run's), the source run is one more run of the target: when the
# machine ran it slower or faster than the validation runs, the bound widens by the source's
# distance from the validation run nearest it, and the predicted step is held to PCT % of the
# source's own measured step instead (what the projection saw; its replay is exact). Nothing
# else excuses a miss.
# The communication library's own estimate follows: on the host backend, which has no cost
# model, one line saying so and why; on a GPU, its table per communicator kind. Projected from
# several source directories, the source-runs table is checked too.
max_error=
if [ "$1" = "--max-error" ]; then
  max_error=$2
  shift 2
fi
. "$(dirname "$0")/run_helpers.sh"
run_shown projection_error_check.sh "$@"
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
# With --validate-runs N (N > 1): a row per run whose error is the predicted step against that
# run's, the table above compared with the run of median step, and the spread line's verdict
# (within or outside the measured range) true of the figures.
runs=1
prev=
for a in "$@"; do
  [ "$prev" = "--validate-runs" ] && runs=$a
  prev=$a
done
if [ "$runs" -gt 1 ]; then
  printf '%s\n' "$out" | awk -v runs="$runs" '
    /^## Validation:/ { main = 1; next }
    main && /^ step \(ms\) / { pred = $(NF - 2); compared = $(NF - 1); main = 0 }
    /^## Validation runs/ { in_runs = 1; next }
    in_runs && /^ [0-9]+ / {
      n++; step[n] = $2; err = $3; sub(/%$/, "", err)
      want = 100 * (pred - $2) / $2
      d = err - want; if (d < 0) d = -d
      if (d > 0.06 + 100 * 0.0011 * (1 + pred / $2) / $2) {
        print "FAILED: run " $1 " error " err "% but (" pred " - " $2 ") / " $2 " = " want "%"; bad = 1
      }
    }
    in_runs && /^# the runs.* own spread/ {
      verdict = ($0 ~ /lies within/) ? "within" : "outside"; in_runs = 0
    }
    END {
      if (n != runs) { print "FAILED: " n + 0 " run rows for --validate-runs " runs; exit 1 }
      # the compared run: the median step (the lower middle of an even count)
      for (i = 1; i <= n; i++) { s[i] = step[i] + 0 }
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
      median = s[int((n + 1) / 2)]
      if (median != compared + 0) { print "FAILED: compared with " compared " ms, the median run is " median " ms"; bad = 1 }
      inside = (pred + 0 >= s[1] && pred + 0 <= s[n]) ? "within" : "outside"
      if (verdict != inside) { print "FAILED: the spread line says " verdict ", the figures " inside; bad = 1 }
      exit bad
    }' || { echo "projection_error_check.sh: FAILED (validation runs)"; exit 1; }
fi
# Several source directories: the source-runs section lists each run, and every combined figure
# came from 1 to that many runs, its median within their range (min <= median <= max).
sources=0
prev=
for a in "$@"; do
  case $prev in
    --validate-out | --baseline | --links | -o | --output) ;;
    *) [ -d "$a" ] && sources=$((sources + 1)) ;;
  esac
  prev=$a
done
if [ "$sources" -gt 1 ]; then
  printf '%s\n' "$out" | awk -v n="$sources" '
    /^## Source runs: / { on = 1; if ($4 != n) { print "FAILED: " $4 " source runs, " n " given"; bad = 1 } next }
    on && /^ run +steps / { list = 1; next }
    on && list && /^ [0-9]+ +[0-9]+ / { runs++; next }
    on && /^ figure +unit +runs / { list = 0; table = 1; next }
    on && table && /^ / {
      k = $(NF - 4); med = $(NF - 3) + 0; lo = $(NF - 2) + 0; hi = $(NF - 1) + 0
      if (k < 1 || k > n || lo > med || med > hi) { print "FAILED: figure row: " $0; bad = 1 }
      figures++
      next
    }
    on && table { on = 0 }
    END {
      if (runs != n) { print "FAILED: " runs + 0 " source run rows for " n " directories"; exit 1 }
      if (figures == 0) { print "FAILED: no combined figure"; exit 1 }
      exit bad
    }' || { echo "projection_error_check.sh: FAILED (source runs)"; exit 1; }
fi
if [ -n "$max_error" ]; then
  printf '%s\n' "$out" | awk -v bound="$max_error" '
    /^# commprof project: / { target = $4 }
    /^# measured: / { for (i = 3; i < NF; i++) if ($i == "at") measured = $(i + 1) }
    /^# the run itself: measured step [0-9.]+ ms/ { source = $7 + 0 }
    /^## Validation:/ { main = 1; next }
    main && /^ step \(ms\) / {
      pred = $(NF - 2) + 0; err = $NF; sub(/%$/, "", err); err += 0; main = 0; found = 1
    }
    /^## Validation runs/ { in_runs = 1; next }
    in_runs && /^ [0-9]+ / {
      e = $3; sub(/%$/, "", e); e += 0; if (e < 0) e = -e
      if (!nearest_set || e < nearest) { nearest = e; nearest_set = 1 }
      steps[++runs] = $2 + 0
    }
    /^# the runs.* own spread: slowest step [0-9.]+% / {
      spread = $0; sub(/.*slowest step /, "", spread); sub(/%.*/, "", spread)
    }
    END {
      if (!found) { print "FAILED: no step row to hold to " bound "%"; exit 1 }
      allowed = bound + 0
      if (spread + 0 > allowed) allowed = spread + 0
      # Its own layout: the source is one more run of the target (see the header).
      drift = ""
      if (target != "" && target == measured && source > 0) {
        for (i = 1; i <= runs; i++) {
          d = 100 * (source - steps[i]) / steps[i]; if (d < 0) d = -d
          if (drift == "" || d < drift) drift = d
        }
        own = 100 * (pred - source) / source; if (own < 0) own = -own
        if (own > bound + 0) {
          printf "FAILED: the step is off by %.1f%% from its own source run (%s ms), beyond %s%%\n", own, source, bound
          exit 1
        }
        if (drift != "") allowed += drift
      }
      a = err < 0 ? -err : err
      if (nearest_set && nearest < a) { a = nearest; err = "(nearest run) " nearest }
      if (a > allowed) {
        print "FAILED: the step is off by " err "%, beyond " sprintf("%.1f", allowed) "% (--max-error " bound \
              (spread == "" ? "" : ", the validation runs spread " spread "%") \
              (drift == "" ? "" : sprintf(", the source run %.1f%% from the nearest of them", drift)) ")"
        exit 1
      }
      print "projection_error_check.sh: step error " err "% within " sprintf("%.1f", allowed) "%" \
            (drift == "" ? "" : sprintf(" (the source run %.1f%% from the nearest validation run; " \
                                        "the prediction %.1f%% from the source)", drift, own))
    }' || { echo "projection_error_check.sh: FAILED (bound)"; exit 1; }
fi
if ! printf '%s\n' "$out" | grep -Eq "^# the library's own estimate: none \(.+\)$|^## Collectives per communicator kind \(one step\): the projection, "; then
  echo "projection_error_check.sh: FAILED: neither the library's estimate nor why it has none"
  exit 1
fi
echo "projection_error_check.sh: OK"
