#!/usr/bin/env bash
# On a 2-GPU host, in one device call: `ctest -L gpu` (the GPU tests and the NCCL fault tests),
# then nccl-tests and `commprof bench` alternately on the same GPUs (ROUNDS rounds, so drift hits
# both), then `commprof bench --graph` beside the plain sweep. Writes into $OUT; the bench and
# nccl-tests JSON files compare with scripts/compare-anchors.py.
#   OUT=/dir NCCL_TESTS=/dir/with/*_perf ROUNDS=2 [SKIP_CTEST=1] [SKIP_SWEEP=1] scripts/gpu-same-call.sh
# NCCL_TESTS may be empty: the nccl-tests rounds are then skipped (and said so).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck disable=SC1091
source scripts/device-prepare.sh  # build/cuda -> .carry/build-cuda, NCCL_NVLS_ENABLE=0
OUT=${OUT:-$PWD/gpu-out}
B=build/cuda
ROUNDS=${ROUNDS:-2}
NT=${NCCL_TESTS:-}
mkdir -p "$OUT"
log="$OUT/same-call.log"
: >"$log"
say() { echo "== $*" | tee -a "$log"; }
MPI=(mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH)
SWEEP=(-b 1M -e 1G -f 4 -n 20 -w 5)

say "$(date -u +%FT%TZ) host $(hostname), commit ${COMMIT:-unknown}"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader >>"$log" 2>&1

if [ "${SKIP_CTEST:-0}" != 1 ]; then
  say "ctest -L gpu"
  ctest --test-dir "$B" -L gpu --output-on-failure --timeout 180 >"$OUT/ctest-gpu.txt" 2>&1
  say "ctest rc=$?: $(grep -E 'tests passed|tests failed' "$OUT/ctest-gpu.txt")"
  grep -E "Test +#|Passed|Failed|Skipped" "$OUT/ctest-gpu.txt" >>"$log"
fi

declare -A NT_NAME=([allreduce]=all_reduce [allgather]=all_gather [sendrecv]=sendrecv)
for round in $(seq 1 "$ROUNDS"); do
  for op in ${OPS:-sendrecv allreduce allgather}; do
    if [ -n "$NT" ] && [ -x "$NT/${NT_NAME[$op]}_perf" ]; then
      mkdir -p "$OUT/nccl-tests-$round"
      "${MPI[@]}" "$NT/${NT_NAME[$op]}_perf" "${SWEEP[@]}" -c 1 \
        -J "$OUT/nccl-tests-$round/${NT_NAME[$op]}.json" >"$OUT/nccl-tests-$round-$op.txt" 2>&1
      say "round $round nccl-tests $op rc=$?"
    else
      say "round $round nccl-tests $op: no binary under '${NT}'"
    fi
    "${MPI[@]}" "$B/commprof" bench --backend cuda --ops "$op" "${SWEEP[@]}" \
      --out "$OUT/commprof-$round-$op" >"$OUT/commprof-$round-$op.txt" 2>&1
    say "round $round commprof $op rc=$?"
  done
done

if [ "${SKIP_SWEEP:-0}" = 1 ]; then say "finished $(date -u +%FT%TZ)"; exit 0; fi
say "commprof bench, all ops, plain then --graph"
"${MPI[@]}" "$B/commprof" bench --backend cuda --ops all "${SWEEP[@]}" --out "$OUT/plain" \
  >"$OUT/plain.txt" 2>&1
say "plain rc=$?"
"${MPI[@]}" "$B/commprof" bench --backend cuda --ops all "${SWEEP[@]}" --graph --out "$OUT/graph" \
  >"$OUT/graph.txt" 2>&1
say "graph rc=$?"
say "finished $(date -u +%FT%TZ)"
