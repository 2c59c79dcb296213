#!/usr/bin/env bash
# The CUDA backend's validation on a 2-GPU host, in one go: GPU tests, the nccl-tests-style
# sweep, the GEMM probe and the instrumentation cost. Writes logs and JSON into $OUT (default
# ./gpu-out). Expects a `cuda` preset build in build/cuda (built here or carried there).
#   OUT=/some/dir scripts/gpu-validate.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
B=${BUILD:-build/cuda}
NP=${NP:-2}
MPI=(mpirun --allow-run-as-root -np "$NP" -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=WARN)
log="$OUT/gpu.log"
: >"$log"
say() { echo "== $*" | tee -a "$log"; }

say "$(date -u +%FT%TZ) host $(hostname), commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv >>"$log" 2>&1
nvidia-smi topo -m >>"$log" 2>&1

say "ctest -L gpu"
(cd "$B" && ctest -L gpu --output-on-failure) >>"$log" 2>&1
say "ctest rc=$?"

say "bench: all ops, 1 MiB .. 1 GiB by 4, 20 iters, 5 warmup (as the nccl-tests anchors)"
"${MPI[@]}" "$B/commprof" bench --backend cuda --ops all -b 1M -e 1G -f 4 -n 20 -w 5 \
  --out "$OUT/bench" >>"$log" 2>&1
say "bench rc=$?"

say "gemm probe: bf16 and float (TF32) 8192^3"
"${MPI[@]}" "$B/commprof" gemm --backend cuda --dtype bfloat16 >>"$log" 2>&1
"${MPI[@]}" "$B/commprof" gemm --backend cuda --dtype float >>"$log" 2>&1
say "gemm rc=$?"

say "instrumentation cost: per-call events + NVTX vs none, interleaved, one run"
"${MPI[@]}" "$B/commprof" bench --backend cuda --ops allreduce,allgather,sendrecv -b 1M -e 1G -f 4 \
  -n 20 -w 5 --instrument both --out "$OUT/instr" >>"$log" 2>&1
say "instr rc=$?"
