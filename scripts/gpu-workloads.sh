#!/usr/bin/env bash
# Mock workloads on a 2-GPU host with a 1.3B-like shape: dp (with and without overlap, and with
# per-op timing off to measure its cost), tp, pp with both schedules, zero. Logs into $OUT/workloads.log,
# the dp runs' rank files into $OUT/dp and $OUT/dp-serial.
#   OUT=/some/dir scripts/gpu-workloads.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
B=${BUILD:-build/cuda}
MPI=(mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE=0)
RUN=("${MPI[@]}" "$B/commprof" run --backend cuda --model gpt-1.3b --steps 10 --warmup-steps 3)
log="$OUT/workloads.log"
: >"$log"
step() { echo "== $*" | tee -a "$log"; "${RUN[@]}" "$@" >>"$log" 2>&1; echo "== rc=$?" >>"$log"; }

echo "== $(date -u +%FT%TZ) host $(hostname), commit ${COMMIT:-unknown}" | tee -a "$log"
step --workload dp --out "$OUT/dp"
step --workload dp --no-overlap --out "$OUT/dp-serial"
step --workload dp --op-timing step
step --workload dp --no-overlap --op-timing step
step --workload dp --op-timing shared
step --workload tp
step --workload tp --sequence-parallel
step --workload pp --schedule 1f1b
step --workload pp --schedule gpipe
step --workload dp --dp-mode zero
step --workload dp --offload
