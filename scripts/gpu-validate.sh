#!/usr/bin/env bash
# The CUDA backend's validation on a 2-GPU host, in one go: GPU tests, the nccl-tests-style
# sweep, the GEMM probe and the instrumentation cost; with NSYS_CAPTURE=1 also a tiny dp run
# under Nsight Systems, exported to SQLite (test data for the nsys importer). Writes into $OUT
# (default ./gpu-out). Expects a `cuda` preset build in $BUILD (default build/cuda); only the
# binaries are needed: commprof and tests/commprof_cuda_backend_mpi_tests.
#   OUT=/some/dir BUILD=build/cuda scripts/gpu-validate.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
B=${BUILD:-build/cuda}
MPI=(mpirun --allow-run-as-root -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=WARN)
log="$OUT/gpu.log"
: >"$log"
say() { echo "== $*" | tee -a "$log"; }

say "$(date -u +%FT%TZ) host $(hostname), commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv >>"$log" 2>&1
nvidia-smi topo -m >>"$log" 2>&1

for np in 1 2; do
  say "GPU tests, $np rank(s)"
  "${MPI[@]}" -np "$np" "$B/tests/commprof_cuda_backend_mpi_tests" >>"$log" 2>&1
  say "GPU tests np$np rc=$?"
done

say "bench: all ops, 1 MiB .. 1 GiB by 4, 20 iters, 5 warmup (as the nccl-tests anchors)"
"${MPI[@]}" -np 2 "$B/commprof" bench --backend cuda --ops all -b 1M -e 1G -f 4 -n 20 -w 5 \
  --out "$OUT/bench" >>"$log" 2>&1
say "bench rc=$?"

if [ "${SKIP_PROBES:-0}" != 1 ]; then
  say "gemm probe: bf16 and float (TF32) 8192^3"
  "${MPI[@]}" -np 2 "$B/commprof" gemm --backend cuda --dtype bfloat16 >>"$log" 2>&1
  "${MPI[@]}" -np 2 "$B/commprof" gemm --backend cuda --dtype float >>"$log" 2>&1
  say "gemm rc=$?"
  say "instrumentation cost: per-call events + NVTX vs none, interleaved, one run"
  "${MPI[@]}" -np 2 "$B/commprof" bench --backend cuda --ops allreduce,allgather,sendrecv \
    -b 1M -e 1G -f 4 -n 20 -w 5 --instrument both --out "$OUT/instr" >>"$log" 2>&1
  say "instr rc=$?"
fi

if [ "${NSYS_CAPTURE:-0}" = 1 ]; then
  say "nsys: tiny dp run, every rank under nsys profile, exported to SQLite"
  # shellcheck disable=SC1091
  source "${NSYS_ENV:-../shared/gpu/nsys-env.sh}" >>"$log" 2>&1
  mkdir -p "$OUT/nsys"
  "${MPI[@]}" -np 2 "$NSYS" profile -t cuda,nvtx -o "$OUT/nsys/commprof_%h_%q{OMPI_COMM_WORLD_RANK}" \
    "$B/commprof" run --backend cuda --workload dp --model tiny --dtype bfloat16 --steps 3 \
    --warmup-steps 1 --out "$OUT/nsys-run" >>"$log" 2>&1
  say "nsys profile rc=$?"
  nsys_finish "$OUT"/nsys/*.qdstrm >>"$log" 2>&1
  rm -f "$OUT"/nsys/*.qdstrm "$OUT"/nsys/*.nsys-rep
  ls -la "$OUT/nsys" "$OUT/nsys-run" >>"$log" 2>&1
fi
