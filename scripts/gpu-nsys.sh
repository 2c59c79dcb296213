#!/usr/bin/env bash
# commprof's event timing against Nsight Systems on the same run: a gpt-1.3b dp run with every
# rank under `nsys profile` (scripts/nsys-profile-rank.sh: reports by host and rank, only the
# measured steps captured), exported to SQLite (compressed to travel), commprof's own rank files,
# the exports imported back (commprof import-nsys) and reported, and the nccl_gpu_overlap_trace
# recipe's overlap with its wall time.
#   OUT=/some/dir BUILD=build/cuda NSYS_ENV=../shared/gpu/nsys-env.sh scripts/gpu-nsys.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT/nsys" "$OUT/run"
B=${BUILD:-build/cuda}
log="$OUT/nsys.log"
: >"$log"
say() { echo "== $*" | tee -a "$log"; }
say "$(date -u +%FT%TZ) host $(hostname), commit ${COMMIT:-unknown}"
# shellcheck disable=SC1090,SC1091
source "${NSYS_ENV:-../shared/gpu/nsys-env.sh}" >>"$log" 2>&1
"$NSYS" --version >>"$log" 2>&1

say "dp, gpt-1.3b, 10 steps after 3 warm-up, each rank under nsys-profile-rank.sh --trace cuda,nvtx"
mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE=0 \
  scripts/nsys-profile-rank.sh --nsys "$NSYS" --trace cuda,nvtx --out "$OUT/nsys" -- \
  "$B/commprof" run --backend cuda --workload dp --model gpt-1.3b --steps 10 --warmup-steps 3 \
  --out "$OUT/run" >>"$log" 2>&1
say "profile rc=$?"
t0=$(date +%s%N)
nsys_finish "$OUT"/nsys/*.qdstrm >>"$log" 2>&1
say "import + sqlite export: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
rm -f "$OUT"/nsys/*.qdstrm

# The exports back into rank files: 10 steps per rank (the warm-up was not captured), COMM ranges
# tagged with their communicator; then the report, beside commprof's own of the same run.
say "commprof import-nsys + report"
"$B/commprof" import-nsys "$OUT"/nsys/*.sqlite -o "$OUT/from-nsys" >>"$log" 2>&1
say "import rc=$?"
"$B/commprof" report "$OUT/from-nsys" -o "$OUT/from-nsys/report.txt" >>"$log" 2>&1
say "report rc=$?"
cat "$OUT/from-nsys/report.txt" >>"$log" 2>&1

say "nsys recipe nccl_gpu_overlap_trace"
t0=$(date +%s%N)
LD_LIBRARY_PATH=/tmp/commprof-dw/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-} \
  "$NSYS" recipe nccl_gpu_overlap_trace --input "$OUT"/nsys/*.nsys-rep --output "$OUT/recipe" \
  --csv >>"$log" 2>&1
rc=$?
say "recipe rc=$rc wall $(( ($(date +%s%N) - t0) / 1000000 )) ms"
find "$OUT/recipe" -maxdepth 2 -type f | head -30 >>"$log"
for f in $(find "$OUT/recipe" -name '*.csv' | head -5); do echo "--- $f" >>"$log"; head -40 "$f" >>"$log"; done
tar -C "$OUT" -cJf "$OUT/recipe.tar.xz" recipe 2>>"$log" && rm -rf "$OUT/recipe"
rm -rf "$OUT"/nsys/*.nsys-rep "$OUT"/nsys/*_pqtdir
ls -la "$OUT"/nsys >>"$log"
xz -T0 -6 "$OUT"/nsys/*.sqlite
ls -la "$OUT"/nsys "$OUT"/run >>"$log"
