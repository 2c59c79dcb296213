#!/usr/bin/env bash
# Activity timing (CUPTI) on a 2-GPU host, in one call so every ratio comes from one session:
#  1. the GPU tests (CUDA backend with CUPTI recording, 1 and 2 ranks);
#  2. what each op timing costs a gpt-1.3b dp step: step / activity / pair / shared, interleaved
#     twice, each a fresh job of 10 measured steps (phase 5: the same for tp and pp);
#  3. bench: every op 1 MiB..1 GiB, plain loops against per-call activity records + NVTX,
#     interleaved in one process (--instrument activity-both), and the plain sweep for busbw;
#  4. the same dp job under nsys (commprof falls back to events if nsys holds CUPTI), exported,
#     imported (commprof import-nsys) and reported, beside an activity-timed job.
#   OUT=/some/dir BUILD=build/cuda NSYS_ENV=.carry/gpu/nsys-env.sh [PHASES="1 2 3 4"] \
#     scripts/gpu-activity.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-out}
B=${BUILD:-build/cuda}
mkdir -p "$OUT"
log="$OUT/activity.log"
: >"$log"
say() { echo "== $*" | tee -a "$log"; }
PHASES=${PHASES:-1 2 3 4}
phase() { [[ " $PHASES " == *" $1 "* ]]; }
# Turns the per-rank recordings in DIR into .sqlite exports: nsys_finish (nsys-env.sh) where nsys
# left .qdstrm files (no libdw), nsys export where it wrote .nsys-rep itself.
export_reports() {
  local f dw=/tmp/commprof-dw/usr/lib/x86_64-linux-gnu
  if compgen -G "$1/*.qdstrm" >/dev/null; then nsys_finish "$1"/*.qdstrm >>"$log" 2>&1; fi
  for f in "$1"/*.nsys-rep; do
    [ -f "${f%.nsys-rep}.sqlite" ] && continue
    LD_LIBRARY_PATH=$dw:${LD_LIBRARY_PATH:-} "$NSYS" export --type sqlite --force-overwrite true \
      -o "${f%.nsys-rep}.sqlite" "$f" >>"$log" 2>&1
  done
}
# Reduces each run directory named into NAME.report.json and .txt, and logs the per-rank table.
report_runs() {
  local d
  for d in "$@"; do
    "$B/commprof" report "$OUT/$d" --format json -o "$OUT/$d.report.json" >>"$log" 2>&1
    "$B/commprof" report "$OUT/$d" >"$OUT/$d.report.txt" 2>&1
    say "report $d rc=$?"
    sed -n '/## Per rank/,/^$/p' "$OUT/$d.report.txt" >>"$log"
  done
}
MPI=(mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH)
RUN=("$B/commprof" run --backend cuda --workload dp --model gpt-1.3b --steps 10 --warmup-steps 3)
say "$(date -u +%FT%TZ) host $(hostname), commit ${COMMIT:-unknown}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$log" 2>&1

if phase 1; then
say "1. GPU tests"
for np in 1 2; do
  mpirun --allow-run-as-root -np "$np" -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH \
    "$B/tests/commprof_cuda_backend_mpi_tests" >>"$log" 2>&1
  say "cuda_backend_np$np rc=$?"
done
fi

if phase 2; then
say "2. op timing cost, gpt-1.3b dp (step time: rank 0's summary line)"
for pass in 1 2; do
  for t in step activity pair shared; do
    out_args=()
    [ "$pass" = 1 ] && [ "$t" != step ] && out_args=(--out "$OUT/dp-$t")
    "${MPI[@]}" "${RUN[@]}" --op-timing "$t" "${out_args[@]}" >"$OUT/run.txt" 2>&1
    rc=$?
    say "pass $pass --op-timing $t rc=$rc: $(grep -E '^  step time \(ms\)' "$OUT/run.txt")"
    grep -E "op timing|busy|warn|error" "$OUT/run.txt" >>"$log"
    [ "$pass" = 1 ] && [ "$t" = activity ] && cp "$OUT/run.txt" "$OUT/dp-activity.txt"
  done
done
fi

if phase 3; then
say "3. bench: plain vs per-call activity records + NVTX, interleaved"
"${MPI[@]}" "$B/commprof" bench --backend cuda --ops allreduce,allgather,reducescatter,alltoall,broadcast,sendrecv \
  -b 1M -e 1G -f 4 -n 20 -w 5 --instrument activity-both --out "$OUT/bench-activity" >"$OUT/bench-activity.txt" 2>&1
say "bench activity-both rc=$?"
"${MPI[@]}" "$B/commprof" bench --backend cuda --ops allreduce,allgather,reducescatter,alltoall,broadcast,sendrecv \
  -b 1M -e 1G -f 4 -n 20 -w 5 --out "$OUT/bench-plain" >"$OUT/bench-plain.txt" 2>&1
say "bench plain rc=$?"
fi

if phase 4; then
say "4. nsys: the dp job with each rank under nsys (scripts/nsys-profile-rank.sh: measured steps)"
# shellcheck disable=SC1090,SC1091
source "${NSYS_ENV:-../shared/gpu/nsys-env.sh}" >>"$log" 2>&1
mkdir -p "$OUT/nsys"
"${MPI[@]}" scripts/nsys-profile-rank.sh --nsys "$NSYS" --out "$OUT/nsys" --trace cuda,nvtx -- \
  "${RUN[@]}" --out "$OUT/dp-nsys" >"$OUT/dp-nsys.txt" 2>&1
say "profile rc=$?"
grep -E "op timing|warn|CUPTI|error" "$OUT/dp-nsys.txt" >>"$log"
"${MPI[@]}" scripts/nsys-profile-rank.sh --nsys "$NSYS" --out "$OUT/nsys-activity" --trace cuda,nvtx -- \
  "${RUN[@]}" --op-timing activity >"$OUT/dp-nsys-activity.txt" 2>&1
say "profile with --op-timing activity rc=$? (2 expected: nsys holds CUPTI)"
grep -E "error" "$OUT/dp-nsys-activity.txt" | head -3 >>"$log"
rm -rf "$OUT/nsys-activity"
export_reports "$OUT/nsys"
ls -la "$OUT/nsys" >>"$log"
t0=$(date +%s%N)
"$B/commprof" import-nsys "$OUT"/nsys/commprof_*.sqlite -o "$OUT/dp-nsys-import" >>"$log" 2>&1
say "import-nsys rc=$? in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
"${MPI[@]}" "${RUN[@]}" --op-timing activity --out "$OUT/dp-activity-b" >"$OUT/dp-activity-b.txt" 2>&1
say "activity-timed job (no nsys) rc=$?"
report_runs dp-nsys-import dp-nsys dp-activity-b
rm -rf "$OUT/nsys"
fi
if phase 5; then
  say "5. op timing cost on collective-heavy steps: tp and pp (1f1b), gpt-1.3b"
  for w in "--workload tp" "--workload pp --schedule 1f1b"; do
    for t in step activity pair step activity pair; do
      # shellcheck disable=SC2086
      "${MPI[@]}" "$B/commprof" run --backend cuda $w --model gpt-1.3b --steps 10 --warmup-steps 3 \
        --op-timing "$t" >"$OUT/run.txt" 2>&1
      say "$w --op-timing $t rc=$?: $(grep -E '^  step time \(ms\)' "$OUT/run.txt")"
      grep -E "ops per step|COMM busy" "$OUT/run.txt" >>"$log"
    done
  done
fi
if phase 7; then
  say "7. nsys job with no per-op timing (--op-timing step, the stream content of an activity job)"
  say "   against activity-timed jobs before and after it"
  # shellcheck disable=SC1090,SC1091
  source "${NSYS_ENV:-../shared/gpu/nsys-env.sh}" >>"$log" 2>&1
  "${MPI[@]}" "${RUN[@]}" --op-timing activity --out "$OUT/dp-activity-c1" >"$OUT/dp-activity-c1.txt" 2>&1
  say "activity job 1 rc=$?"
  "${MPI[@]}" scripts/nsys-profile-rank.sh --nsys "$NSYS" --out "$OUT/nsys-step" --trace cuda,nvtx -- \
    "${RUN[@]}" --op-timing step >"$OUT/dp-nsys-step.txt" 2>&1
  say "nsys step-timed job rc=$?"
  "${MPI[@]}" "${RUN[@]}" --op-timing activity --out "$OUT/dp-activity-c2" >"$OUT/dp-activity-c2.txt" 2>&1
  say "activity job 2 rc=$?"
  export_reports "$OUT/nsys-step"
  "$B/commprof" import-nsys "$OUT"/nsys-step/commprof_*.sqlite -o "$OUT/dp-nsys-step-import" >>"$log" 2>&1
  say "import rc=$?"
  rm -rf "$OUT/nsys-step"
  for d in dp-nsys-step-import dp-activity-c1 dp-activity-c2; do
    "$B/commprof" report "$OUT/$d" --format json -o "$OUT/$d.report.json" >>"$log" 2>&1
  done
  for d in dp-activity-c1 dp-activity-c2; do
    scripts/compare-reports.py "$OUT/dp-nsys-step-import.report.json" "$OUT/$d.report.json" | tee -a "$log"
  done
  scripts/compare-reports.py "$OUT/dp-activity-c2.report.json" "$OUT/dp-activity-c1.report.json" | tee -a "$log"
fi
if phase 8; then
  say "8. nsys recipe nccl_gpu_overlap_trace against import-nsys on one step-timed nsys job"
  # shellcheck disable=SC1090,SC1091
  source "${NSYS_ENV:-../shared/gpu/nsys-env.sh}" >>"$log" 2>&1
  "${MPI[@]}" scripts/nsys-profile-rank.sh --nsys "$NSYS" --out "$OUT/nsys8" --trace cuda,nvtx -- \
    "${RUN[@]}" --op-timing step >"$OUT/dp-nsys8.txt" 2>&1
  say "nsys step-timed job rc=$?"
  export_reports "$OUT/nsys8"
  dw=/tmp/commprof-dw/usr/lib/x86_64-linux-gnu
  t0=$(date +%s%N)
  LD_LIBRARY_PATH=$dw:${LD_LIBRARY_PATH:-} "$NSYS" recipe nccl_gpu_overlap_trace \
    --input "$OUT"/nsys8/*.nsys-rep --output "$OUT/recipe8" --csv >>"$log" 2>&1
  say "recipe rc=$? wall $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  t0=$(date +%s%N)
  "$B/commprof" import-nsys "$OUT"/nsys8/commprof_*.sqlite -o "$OUT/dp-nsys8-import" >>"$log" 2>&1
  say "import-nsys rc=$? wall $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  "$B/commprof" report "$OUT/dp-nsys8-import" --format json -o "$OUT/dp-nsys8-import.report.json" >>"$log" 2>&1
  "$B/commprof" report "$OUT/dp-nsys8-import" >"$OUT/dp-nsys8-import.report.txt" 2>&1
  sed -n '/## Per rank/,/^$/p' "$OUT/dp-nsys8-import.report.txt" >>"$log"
  find "$OUT/recipe8" -name '*.csv' >>"$log"
  rm -rf "$OUT/nsys8"
fi
if phase 6; then
  say "6. repeated activity-timed tp jobs (exit status of each)"
  for i in 1 2 3; do
    "${MPI[@]}" "$B/commprof" run --backend cuda --workload tp --model gpt-1.3b --steps 10 \
      --warmup-steps 3 --op-timing activity >"$OUT/run.txt" 2>&1
    say "tp activity job $i rc=$?: $(grep -E '^  step time \(ms\)' "$OUT/run.txt")"
  done
fi
if phase 2; then report_runs dp-activity dp-pair dp-shared; fi
rm -f "$OUT/run.txt"
tar -C "$OUT" -cJf "/tmp/results.tar.xz" --exclude=activity.log . 2>>"$log"
find "$OUT" -mindepth 1 -maxdepth 1 ! -name activity.log ! -name 'bench-*.txt' -exec rm -rf {} +
mv /tmp/results.tar.xz "$OUT/results.tar.xz"
say "done"
