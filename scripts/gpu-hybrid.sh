#!/usr/bin/env bash
# The multi-GPU runs of issue #9 on one host: bench (allreduce, allgather, reducescatter, 1 MiB
# to 1 GiB) on NP ranks, then gpt-1.3b workloads, each with its aggregated report (report.txt /
# report.json in its --out directory). NP=4: dp4, tp2 x dp2, tp2 x pp2 (1f1b), pp4 (1f1b and
# gpipe); NP=8: tp2 x pp2 x dp2, tp8, dp8, pp8 (1f1b and gpipe).
#   OUT=/some/dir BUILD=build/cuda NP=4 scripts/gpu-hybrid.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-out}
B=${BUILD:-build/cuda}
NP=${NP:-4}
mkdir -p "$OUT"
log="$OUT/gpu-${NP}.log"
: >"$log"
say() { echo "== $*" | tee -a "$log"; }
MPI=(mpirun --allow-run-as-root -np "$NP" -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH)
say "$(date -u +%FT%TZ) host $(hostname), commit ${COMMIT:-unknown}, $NP ranks"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader >>"$log" 2>&1
nvidia-smi topo -m >>"$log" 2>&1

"${MPI[@]}" "$B/commprof" bench --backend cuda --ops allreduce,allgather,reducescatter \
  -b 1M -e 1G -f 4 -n 20 -w 5 --out "$OUT/bench" >"$OUT/bench.txt" 2>&1
say "bench rc=$?"

run() {
  local name=$1
  shift
  "${MPI[@]}" "$B/commprof" run --backend cuda --model gpt-1.3b --steps 10 --warmup-steps 3 \
    "$@" --out "$OUT/$name" >"$OUT/$name.txt" 2>&1
  say "$name ($*) rc=$?: $(grep -E '^  step time \(ms\)' "$OUT/$name.txt")"
}
if [ "$NP" = 8 ]; then
  run tp2pp2dp2 --workload hybrid --tp 2 --pp 2 --dp 2 --schedule 1f1b
  run tp8 --workload hybrid --tp 8
  run dp8 --workload dp
  run pp8-1f1b --workload pp --schedule 1f1b
  run pp8-gpipe --workload pp --schedule gpipe
else
  run dp4 --workload dp
  run tp2dp2 --workload hybrid --tp 2 --dp 2
  run tp2pp2 --workload hybrid --tp 2 --pp 2 --schedule 1f1b
  run pp4-1f1b --workload pp --schedule 1f1b
  run pp4-gpipe --workload pp --schedule gpipe
fi
tar -C "$OUT" -cJf /tmp/gpu4.tar.xz --exclude="gpu-${NP}.log" . && mv /tmp/gpu4.tar.xz "$OUT/results-${NP}.tar.xz"
find "$OUT" -mindepth 1 -maxdepth 1 ! -name "gpu-${NP}.log" ! -name 'results-*.tar.xz' -exec rm -rf {} +
say "finished"
