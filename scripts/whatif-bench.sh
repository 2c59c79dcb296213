#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `commprof whatif` against the runs it predicts (issue #31): for each workload, a plain run of
# the mock, a run with one rank's compute slowed (run --slow-rank R:F) and a serial run
# (--no-overlap); whatif replays the plain run's step graphs with the same changes
# (--scale rankR:comp=F, and --serialize) and its prediction is set beside the measured run:
# step, exposed communication and overlap, with the error in %. Every figure is whatif's own
# (means over the measured steps that carry per-op timing), so both sides count alike.
#
#   scripts/whatif-bench.sh NP "WORKLOADS" [WORK_DIR]
#   e.g. scripts/whatif-bench.sh 4 "dp tp pp hybrid"
#
# WORKLOADS: dp, tp, pp (1f1b) and hybrid (tp 2 x pp 2, x dp where NP > 4). Environment: BUILD
# (default build/host), BACKEND (host; cuda on GPUs), MODEL_ARGS (default "--model tiny"),
# SLOW (R:F, default the last rank at 1.5), STEPS (8) after WARMUP (2), OP_TIMING (activity: every
# measured step carries its ops), MPIRUN_ARGS (more mpirun arguments, e.g. -x NCCL_NVLS_ENABLE=0).
# Prints a line per change and workload.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '3,17p' "$0" >&2; exit 2; }
np=$1 workloads=$2
work=${3:-/tmp/commprof-whatif-bench}
build=${BUILD:-build/host}
commprof=$build/commprof
[ -x "$commprof" ] || { echo "no $commprof (set BUILD)" >&2; exit 2; }
backend=${BACKEND:-host}
slow=${SLOW:-$((np - 1)):1.5}
slow_rank=${slow%%:*} slow_factor=${slow#*:}
read -r -a model <<<"${MODEL_ARGS:---model tiny}"
read -r -a extra <<<"${MPIRUN_ARGS:-}"
mpirun=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
mpirun+=("${extra[@]}")
mkdir -p "$work"

run() {  # run OUT ARGS...: one job of the mock, its rank files in OUT
  local out=$1
  shift
  rm -rf "$out"
  "${mpirun[@]}" -np "$np" "$commprof" run --backend "$backend" "${model[@]}" \
    --steps "${STEPS:-8}" --warmup-steps "${WARMUP:-2}" --op-timing "${OP_TIMING:-activity}" \
    --out "$out" "$@" >"$out.log" 2>&1 ||
    { cat "$out.log" >&2; exit 1; }
}

whatif() {  # whatif JSON ARGS...
  local json=$1
  shift
  "$commprof" whatif --format json -o "$json" "$@"
}

# predicted (whatif of the plain run) against measured (whatif of the changed run, no change)
compare() {  # compare WORKLOAD CHANGE PREDICTED.json MEASURED.json
  python3 - "$@" <<'EOF'
import json, sys
workload, change, p, m = sys.argv[1:5]
pred = json.load(open(p))["predicted"]
meas = json.load(open(m))["measured"]
def ms(f, key):
    return f[key] / 1e6
def err(a, b):
    return "n/a" if not b else "%+.1f%%" % (100.0 * (a / b - 1))
def pct(v):
    return "n/a" if v is None else "%.1f" % (100.0 * v)
print("%-7s %-22s step predicted %9.3f ms measured %9.3f ms error %7s | exposed comm "
      "predicted %8.3f ms measured %8.3f ms | overlap predicted %5s%% measured %5s%%" % (
          workload, change, ms(pred, "step_time_ns"), ms(meas, "step_time_ns"),
          err(pred["step_time_ns"], meas["step_time_ns"]), ms(pred, "exposed_comm_ns"),
          ms(meas, "exposed_comm_ns"), pct(pred["overlap"]), pct(meas["overlap"])))
EOF
}

echo "# whatif-bench: $np ranks, backend $backend, ${model[*]}, slow rank $slow_rank x$slow_factor," \
  "${STEPS:-8} steps after ${WARMUP:-2}, op timing ${OP_TIMING:-activity}"
for w in $workloads; do
  case $w in
    dp) args=(--workload dp) ;;
    tp) args=(--workload tp) ;;
    pp) args=(--workload pp --schedule 1f1b) ;;
    hybrid) args=(--workload hybrid --tp 2 --pp 2) ;;
    *) echo "unknown workload '$w' (dp, tp, pp, hybrid)" >&2; exit 2 ;;
  esac
  d=$work/$w
  run "$d-plain" "${args[@]}"
  run "$d-slow" "${args[@]}" --slow-rank "$slow"
  run "$d-serial" "${args[@]}" --no-overlap
  whatif "$d-pred-slow.json" "$d-plain" --scale "rank$slow_rank:comp=$slow_factor"
  whatif "$d-meas-slow.json" "$d-slow"
  whatif "$d-pred-serial.json" "$d-plain" --serialize
  whatif "$d-meas-serial.json" "$d-serial"
  whatif "$d-meas-plain.json" "$d-plain"
  compare "$w" "unchanged (replay)" "$d-meas-plain.json" "$d-meas-plain.json"
  compare "$w" "rank$slow_rank:comp=$slow_factor" "$d-pred-slow.json" "$d-meas-slow.json"
  compare "$w" "serialize/--no-overlap" "$d-pred-serial.json" "$d-meas-serial.json"
done
