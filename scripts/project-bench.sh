#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The projection's own error on the host backend (commprof project, docs/analysis.md
# "Projection"): a link model fitted to sweeps on 2 and 4 ranks, a 4-rank run of each workload,
# the step of 8 ranks predicted from it and measured by running it (--validate), for dp, tp, pp
# (1F1B) and a hybrid (tp 2 x pp 2 x dp 2). Prints, per case, predicted and measured step,
# exposed communication and overlap with the error (with the link model of the sweeps, and the
# step once more with a link model fitted to the 4-rank run's own collectives); every output
# under $OUT.
#
#   scripts/project-bench.sh                     BUILD=build/host OUT=./project-bench-out
#
# Environment: BUILD (a host build with bin commprof, default build/host), OUT (default
# ./project-bench-out, emptied first), STEPS and WARMUP (measured and warm-up steps of every run,
# default 5 and 2), CASES (default "dp tp pp hybrid"). The model: tiny (h 128, FFN 512, seq 64,
# float) with 8 layers, 8 heads and 8 micro-batches, so that tp 8 and pp 8 divide it. Exit 0
# when every case ran (whatever its error: the error is the measurement), 1 when a step failed
# (its log is named), 2 without a build.
set -euo pipefail

BUILD=${BUILD:-build/host}
OUT=${OUT:-./project-bench-out}
STEPS=${STEPS:-5}
WARMUP=${WARMUP:-2}
CASES=${CASES:-dp tp pp hybrid}
here=$(cd "$(dirname "$0")" && pwd)
commprof=$BUILD/commprof
mpi=$here/mpirun-local.sh
if [ ! -x "$commprof" ]; then
  echo "project-bench.sh: no $commprof: build first (cmake --preset host &&" \
    "cmake --build --preset host) or set BUILD" >&2
  exit 2
fi

model=(--model tiny --layers 8 --heads 8 --micro-batches 8)
run_opts=(--backend host "${model[@]}" --steps "$STEPS" --warmup-steps "$WARMUP" --op-timing pair)
rm -rf "$OUT"
mkdir -p "$OUT"
started=$(date +%s)

# Runs a step with its output in $OUT/$1.log; on failure names the log and stops.
step() {
  local log=$OUT/$1.log
  shift
  echo "== $* > $log"
  if ! "$@" >"$log" 2>&1; then
    echo "project-bench.sh: FAILED, see $log" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
}

# 1. The link model: sweeps on 2 and 4 ranks into one file (the second keeps the first's points).
for np in 2 4; do
  step "bench-np$np" "$mpi" -np "$np" "$commprof" bench --backend host \
    --ops allreduce,allgather,reducescatter,sendrecv -b 1K -e 4M -n 10 -w 3 \
    --fit-links "$OUT/links.json"
done
sed -n '/^# link model/,$p' "$OUT/bench-np4.log" | grep '^#'

# 2. Per case: a 4-rank run, then 8 ranks predicted and run.
source_args() {
  case $1 in
    dp) echo "--workload dp" ;;
    tp) echo "--workload tp" ;;
    pp) echo "--workload pp --schedule 1f1b" ;;
    hybrid) echo "--workload hybrid --tp 2 --pp 2" ;;
    *) echo "project-bench.sh: unknown case '$1' (dp, tp, pp, hybrid)" >&2; exit 2 ;;
  esac
}
target_layout() {
  case $1 in
    dp) echo "dp=8" ;;
    tp) echo "tp=8" ;;
    pp) echo "pp=8" ;;
    hybrid) echo "tp=2,pp=2,dp=2" ;;
  esac
}
for c in $CASES; do
  read -r -a args <<<"$(source_args "$c")"
  step "$c-run4" "$mpi" -np 4 "$commprof" run "${run_opts[@]}" "${args[@]}" --out "$OUT/$c-4"
  step "$c-project8" "$mpi" -np 8 "$commprof" project "$OUT/$c-4" --layout "$(target_layout "$c")" \
    --links "$OUT/links.json" --validate --validate-out "$OUT/$c-8" --backend host
  # The same prediction with the link model fitted to the 4-rank run's own collectives instead.
  step "$c-own8" "$commprof" project "$OUT/$c-4" --layout "$(target_layout "$c")"
done

# 3. The table: each case's validation rows.
echo
echo "# commprof project on the host backend: fitted on 2 and 4 ranks (links), 4-rank runs, 8 ranks"
echo "# predicted against measured ($STEPS steps after $WARMUP warm-up each; $(nproc) cores)"
printf '%-8s %-16s %-18s %12s %12s %10s\n' case target figure predicted measured error
for c in $CASES; do
  awk -v c="$c" -v t="$(target_layout "$c")" '
    /^## Validation/ { on = 1; next }
    on && /^ (step \(ms\)|exposed comm \(ms\)|overlap \(%\)) / {
      label = $0; sub(/^ /, "", label); sub(/  .*/, "", label)
      if ($NF == "pp") { p = $(NF - 3); m = $(NF - 2); e = $(NF - 1) " pp" }
      else { p = $(NF - 2); m = $(NF - 1); e = $NF }
      printf "%-8s %-16s %-18s %12s %12s %10s\n", c, t, label, p, m, e
      if (label == "step (ms)") measured = m
    }
    END {
      p = ""
      while ((getline line < own) > 0) {
        if (line ~ /^ step \(ms\) /) { n = split(line, f, " "); p = f[n] }
      }
      if (p != "" && measured + 0 > 0) {
        printf "%-8s %-16s %-18s %12s %12s %+9.1f%%\n", c, t, "step, own fit (ms)", p, measured,
               100 * (p - measured) / measured
      }
    }' own="$OUT/$c-own8.log" "$OUT/$c-project8.log"
done
echo "# $(($(date +%s) - started)) s in all; logs and rank files in $OUT"
