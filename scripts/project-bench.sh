#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The projection's own error (commprof project, docs/analysis.md "Projection"): a link model
# fitted to bench sweeps on FIT_NPS ranks, a SRC_NP-rank run of each workload, the step of DST_NP
# ranks predicted from it and measured by running it (--validate), for dp, tp, pp (1F1B) and a
# hybrid. Prints, per case, predicted and measured step, exposed communication and overlap with the
# error (with the link model of the sweeps; the step once more from one replay at the ranks' mean
# speeds, without the measured step-to-step compute jitter, and once more with a link model fitted
# to the source run's own collectives; with SOURCE_RUNS above 1, the step each source run predicts
# alone too); every output under $OUT.
#
#   scripts/project-bench.sh                     BUILD=build/host OUT=./project-bench-out
#   BACKEND=cuda BUILD=build/cuda FIT_NPS=2 SRC_NP=2 DST_NP=8 scripts/project-bench.sh
#   SOURCE_RUNS=3 BUILD=build/host scripts/project-bench.sh   # 3 runs of each source, combined
#
# Environment: BACKEND (host or cuda, default host), BUILD (a build with bin commprof, default
# build/$BACKEND), OUT (default ./project-bench-out, emptied first), FIT_NPS (the ranks of each
# link-model sweep, default "2 4"; 2 or more each, as bench --fit-links needs), SRC_NP (ranks of the
# measured runs, default 4), DST_NP (ranks predicted and run, default 8), STEPS and WARMUP (measured
# and warm-up steps of every run, default 5 and 2), CASES (default "dp tp pp hybrid"), MODEL_ARGS
# (default the tiny model, h 128, FFN 512, seq 64, float, with 8 layers, 8 heads and 8 micro-
# batches, so that tp 8 and pp 8 divide it), OP_TIMING (default pair), BENCH_SIZES (the sweep's
# sizes, default "-b 1K -e 4M" on host and "-b 1K -e 64M" on cuda, where a GEMM-sized gradient
# bucket reaches tens of MiB), VALIDATE_RUNS (runs of each target, default 1; above 1 the table
# compares with the run of median step and each case's runs follow it, with their spread),
# SOURCE_RUNS (runs of each source layout, default 1; above 1 the prediction is made from all of
# them, each figure their median (`project DIR1 DIR2 ...`), the table adds the step each source
# run predicts alone, and each case's source runs and their steps follow it).
# The cases' layouts, from the rank counts (each degree must divide the model):
#   dp      dp=SRC_NP                          -> dp=DST_NP
#   tp      tp=SRC_NP                          -> tp=DST_NP
#   pp      pp=SRC_NP, 1F1B                    -> pp=DST_NP
#   hybrid  tp=2,pp=SRC_NP/2 (tp=2 when 2)     -> tp=2,pp=2,dp=DST_NP/4 (tp=2,pp=DST_NP/2 when
#           DST_NP is 2 mod 4, tp=2 when 2)
# Exit 0 when every case ran (whatever its error: the error is the measurement), 1 when a step
# failed (its log is named), 2 without a build or with settings that do not fit.
set -euo pipefail

BACKEND=${BACKEND:-host}
BUILD=${BUILD:-build/$BACKEND}
OUT=${OUT:-./project-bench-out}
STEPS=${STEPS:-5}
WARMUP=${WARMUP:-2}
CASES=${CASES:-dp tp pp hybrid}
FIT_NPS=${FIT_NPS:-2 4}
SRC_NP=${SRC_NP:-4}
DST_NP=${DST_NP:-8}
MODEL_ARGS=${MODEL_ARGS:---model tiny --layers 8 --heads 8 --micro-batches 8}
OP_TIMING=${OP_TIMING:-pair}
VALIDATE_RUNS=${VALIDATE_RUNS:-1}
SOURCE_RUNS=${SOURCE_RUNS:-1}
case $BACKEND in
  host) BENCH_SIZES=${BENCH_SIZES:--b 1K -e 4M} ;;
  cuda) BENCH_SIZES=${BENCH_SIZES:--b 1K -e 64M} ;;
  *) echo "project-bench.sh: BACKEND must be host or cuda, not '$BACKEND'" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
commprof=$BUILD/commprof
mpi=$here/mpirun-local.sh
if [ ! -x "$commprof" ]; then
  echo "project-bench.sh: no $commprof: build first (cmake --preset $BACKEND &&" \
    "cmake --build --preset $BACKEND) or set BUILD" >&2
  exit 2
fi
for v in SRC_NP DST_NP VALIDATE_RUNS SOURCE_RUNS; do
  if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
    echo "project-bench.sh: $v must be a whole number (at least 1), not '${!v}'" >&2
    exit 2
  fi
done
for np in $FIT_NPS; do
  if ! [[ $np =~ ^[1-9][0-9]*$ ]] || [ "$np" -lt 2 ]; then
    echo "project-bench.sh: FIT_NPS holds '$np': each sweep needs 2 ranks or more" >&2
    exit 2
  fi
done
case " $CASES " in
  *" hybrid "*)
    if [ $((SRC_NP % 2)) -ne 0 ] || [ $((DST_NP % 2)) -ne 0 ]; then
      echo "project-bench.sh: the hybrid case (tp 2) needs even SRC_NP and DST_NP" \
        "($SRC_NP, $DST_NP): set CASES without it" >&2
      exit 2
    fi ;;
esac

read -r -a model <<<"$MODEL_ARGS"
read -r -a sizes <<<"$BENCH_SIZES"
read -r -a fit_nps <<<"$FIT_NPS"
run_opts=(--backend "$BACKEND" "${model[@]}" --steps "$STEPS" --warmup-steps "$WARMUP"
  --op-timing "$OP_TIMING")
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

# 1. The link model: a sweep on each of FIT_NPS ranks into one file (each keeps the earlier
# sweeps' points).
last_fit=
for np in "${fit_nps[@]}"; do
  step "bench-np$np" "$mpi" -np "$np" "$commprof" bench --backend "$BACKEND" \
    --ops allreduce,allgather,reducescatter,sendrecv "${sizes[@]}" -n 10 -w 3 \
    --fit-links "$OUT/links.json"
  last_fit=$OUT/bench-np$np.log
done
[ -n "$last_fit" ] && { sed -n '/^# link model/,$p' "$last_fit" | grep '^#' || true; }

# 2. Per case: SOURCE_RUNS SRC_NP-rank runs (the first in $c-SRC_NP, run k in $c-SRC_NP-run<k>),
# then DST_NP ranks predicted from all of them and run.
source_args() {
  case $1 in
    dp) echo "--workload dp" ;;
    tp) echo "--workload tp" ;;
    pp) echo "--workload pp --schedule 1f1b" ;;
    hybrid)
      echo "--workload hybrid --tp 2 --pp $((SRC_NP / 2))" ;;
    *) echo "project-bench.sh: unknown case '$1' (dp, tp, pp, hybrid)" >&2; exit 2 ;;
  esac
}
target_layout() {
  case $1 in
    dp) echo "dp=$DST_NP" ;;
    tp) echo "tp=$DST_NP" ;;
    pp) echo "pp=$DST_NP" ;;
    hybrid)
      local rest=$((DST_NP / 2))
      if [ $((rest % 2)) -eq 0 ]; then
        echo "tp=2,pp=2,dp=$((rest / 2))"
      else
        echo "tp=2,pp=$rest"
      fi ;;
  esac
}
for c in $CASES; do
  read -r -a args <<<"$(source_args "$c")"
  target=$(target_layout "$c")
  sources=()
  for ((k = 1; k <= SOURCE_RUNS; k++)); do
    dir=$OUT/$c-$SRC_NP
    log=$c-run$SRC_NP
    if [ "$k" -gt 1 ]; then
      dir=$dir-run$k
      log=$log-$k
    fi
    step "$log" "$mpi" -np "$SRC_NP" "$commprof" run "${run_opts[@]}" "${args[@]}" --out "$dir"
    sources+=("$dir")
  done
  step "$c-project$DST_NP" "$mpi" -np "$DST_NP" "$commprof" project "${sources[@]}" \
    --layout "$target" --links "$OUT/links.json" --validate --validate-runs "$VALIDATE_RUNS" \
    --validate-out "$OUT/$c-$DST_NP" \
    --backend "$BACKEND"
  # With several source runs, the step each predicts alone (the same link model): the spread the
  # median is there to narrow.
  if [ "$SOURCE_RUNS" -gt 1 ]; then
    for ((k = 1; k <= SOURCE_RUNS; k++)); do
      step "$c-single$k-project$DST_NP" "$commprof" project "${sources[k - 1]}" \
        --layout "$target" --links "$OUT/links.json"
    done
  fi
  # The same prediction with one replay at the ranks' mean speeds (no step-to-step compute
  # jitter drawn): what the jitter's draws change.
  step "$c-steady-project$DST_NP" "$commprof" project "${sources[@]}" --layout "$target" \
    --links "$OUT/links.json" --jitter-draws 0
  # The same prediction with the link model fitted to the source run's own collectives instead:
  # where the source measured no collective of a kind the target needs (a tp run has no pipeline
  # transfer), there is none, and the table says n/a.
  if ! "$commprof" project "${sources[@]}" --layout "$target" >"$OUT/$c-own$DST_NP.log" 2>&1; then
    echo "== $c: no prediction from the run's own fit: $(tail -n 1 "$OUT/$c-own$DST_NP.log")"
  fi
done

# 3. The table: each case's validation rows.
echo
echo "# commprof project on the $BACKEND backend: fitted on ${FIT_NPS// / and } ranks (links)," \
  "$SRC_NP-rank runs ($SOURCE_RUNS of each source, each figure their median), $DST_NP ranks"
echo "# predicted against measured ($STEPS steps after $WARMUP warm-up each; $(nproc) cores)"
printf '%-8s %-16s %-20s %12s %12s %10s\n' case target figure predicted measured error
for c in $CASES; do
  awk -v c="$c" -v t="$(target_layout "$c")" '
    /^## Validation/ { on = 1; next }
    on && /^ (step \(ms\)|exposed comm \(ms\)|overlap \(%\)) / {
      label = $0; sub(/^ /, "", label); sub(/  .*/, "", label)
      if ($NF == "pp") { p = $(NF - 3); m = $(NF - 2); e = $(NF - 1) " pp" }
      else { p = $(NF - 2); m = $(NF - 1); e = $NF }
      printf "%-8s %-16s %-20s %12s %12s %10s\n", c, t, label, p, m, e
      if (label == "step (ms)") measured = m
    }
    END {
      for (k = 1; k <= runs; k++) {
        p = ""
        single = prefix k "-project" dst ".log"
        while ((getline line < single) > 0) {
          if (line ~ /^ step \(ms\) /) { n = split(line, x, " "); p = x[n] }
        }
        close(single)
        label = "step, source " k " (ms)"
        if (p != "" && measured + 0 > 0) {
          printf "%-8s %-16s %-20s %12s %12s %+9.1f%%\n", c, t, label, p, measured,
                 100 * (p - measured) / measured
        } else {
          printf "%-8s %-16s %-20s %12s %12s %10s\n", c, t, label, "n/a", measured, "n/a"
        }
      }
      p = ""
      while ((getline line < steady) > 0) {
        if (line ~ /^ step \(ms\) /) { n = split(line, f, " "); p = f[n] }
      }
      if (p != "" && measured + 0 > 0) {
        printf "%-8s %-16s %-20s %12s %12s %+9.1f%%\n", c, t, "step, no jitter (ms)", p, measured,
               100 * (p - measured) / measured
      }
      p = ""
      while ((getline line < own) > 0) {
        if (line ~ /^ step \(ms\) /) { n = split(line, f, " "); p = f[n] }
      }
      if (p != "" && measured + 0 > 0) {
        printf "%-8s %-16s %-20s %12s %12s %+9.1f%%\n", c, t, "step, own fit (ms)", p, measured,
               100 * (p - measured) / measured
      } else {
        printf "%-8s %-16s %-20s %12s %12s %10s\n", c, t, "step, own fit (ms)", "n/a", measured,
               "n/a"
      }
    }' own="$OUT/$c-own$DST_NP.log" steady="$OUT/$c-steady-project$DST_NP.log" runs="$([ "$SOURCE_RUNS" -gt 1 ] && echo "$SOURCE_RUNS" || echo 0)" \
    prefix="$OUT/$c-single" dst="$DST_NP" "$OUT/$c-project$DST_NP.log"
done
# With VALIDATE_RUNS above 1: each case's runs of the target, the error against each, the spread.
if [ "$VALIDATE_RUNS" -gt 1 ]; then
  for c in $CASES; do
    echo "# $c: every validation run (step ms, error)"
    sed -n '/^## Validation runs/,/^# the runs/{/^ [0-9]/p;/^# the runs/p}' "$OUT/$c-project$DST_NP.log"
  done
fi
# With SOURCE_RUNS above 1: each case's source runs and their steps.
if [ "$SOURCE_RUNS" -gt 1 ]; then
  for c in $CASES; do
    echo "# $c: source runs (run, measured steps, step ms, directory)"
    sed -n '/^## Source runs/,/^ figure /{/^ [0-9]/p}' "$OUT/$c-project$DST_NP.log"
  done
fi
# Where the backend has a cost model (NCCL's), each case's collectives: the projection, the
# library's estimate and the validation run.
for c in $CASES; do
  if grep -q "^## Collectives per communicator kind" "$OUT/$c-project$DST_NP.log"; then
    echo "# $c: $(sed -n 's/^## Collectives per communicator kind (one step): //p' \
      "$OUT/$c-project$DST_NP.log")"
    sed -n '/^## Collectives per communicator kind/,/^$/{/^ /p}' "$OUT/$c-project$DST_NP.log"
  fi
done
echo "# $(($(date +%s) - started)) s in all; logs and rank files in $OUT"
