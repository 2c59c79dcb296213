#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/nsys-profile-rank.sh with the real Nsight Systems on a 2-GPU host: tiny dp and tp runs,
# every rank under the wrapper (capture: the measured steps), and one dp run with --capture all;
# each exported to SQLite, imported (commprof import-nsys), reported, and compared with
# commprof's own rank files of the same run (scripts/compare-nsys-import.py: the captured steps,
# the COMM ops' communicator and sequence number from the NVTX tags, ops per category). Also
# prints what nsys recorded of commprof's domain, its measured_steps range and a few COMM ranges.
# Writes into $OUT (default ./gpu-out/nsys-capture); the .sqlite exports are kept (xz) as test
# data for the importer. Exit 1 if any check failed.
#   OUT=/some/dir BUILD=build/cuda NSYS_ENV=../shared/gpu/nsys-env.sh scripts/gpu-nsys-capture.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-out/nsys-capture}
B=${BUILD:-build/cuda}
rm -rf "$OUT"
mkdir -p "$OUT"
log="$OUT/capture.log"
: >"$log"
say() { echo "== $*" | tee -a "$log"; }
say "$(date -u +%FT%TZ) host $(hostname), commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
# shellcheck disable=SC1090,SC1091
source "${NSYS_ENV:-../shared/gpu/nsys-env.sh}" >>"$log" 2>&1
"$NSYS" --version >>"$log" 2>&1
dw_lib=/tmp/commprof-dw/usr/lib/x86_64-linux-gnu  # libdw for nsys' importer (nsys-env.sh)
MPI=(mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE=0)
failed=0

# What nsys recorded in one export: commprof's domain, the capture range, the steps, COMM ranges.
peek() {
  python3 - "$1" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
text = "COALESCE(n.text, (SELECT value FROM StringIds WHERE id = n.textId))"
q = lambda s: db.execute(s).fetchall()
print("  domains (type 75):", q("SELECT domainId, text FROM NVTX_EVENTS WHERE eventType = 75"))
print("  categories (type 33):", q("SELECT domainId, category, text FROM NVTX_EVENTS WHERE eventType = 33"))
print("  measured_steps:", q("SELECT n.start, n.end, n.domainId, n.textId FROM NVTX_EVENTS n WHERE %s = 'measured_steps'" % text))
print("  steps:", [r[0] for r in q("SELECT %s FROM NVTX_EVENTS n WHERE %s LIKE 'step %%' ORDER BY n.start" % (text, text))])
print("  first kernel, first step start:", q("SELECT MIN(start) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
      q("SELECT MIN(n.start) FROM NVTX_EVENTS n WHERE %s LIKE 'step %%'" % text))
for r in q("SELECT %s, n.int64Value, n.uint64Value FROM NVTX_EVENTS n WHERE n.category = 2 ORDER BY n.start LIMIT 6" % text):
    print("  COMM range:", r)
EOF
}

# run_case NAME CAPTURE COMPARE-FLAGS -- COMMPROF-RUN-ARGS...
run_case() {
  local name=$1 capture=$2 flags=$3 d=$OUT/$1 f rc
  shift 4
  say "$name: mpirun -np 2 scripts/nsys-profile-rank.sh --capture $capture -- commprof run $*"
  "${MPI[@]}" scripts/nsys-profile-rank.sh --nsys "$NSYS" --out "$d/nsys" --capture "$capture" -- \
    "$B/commprof" run --backend cuda --model tiny --dtype bfloat16 "$@" --out "$d/run" >>"$log" 2>&1
  rc=$?
  say "$name: profile rc=$rc"
  [ "$rc" -eq 0 ] || failed=1
  ls -la "$d/nsys" >>"$log" 2>&1
  # nsys turns its recording into a report itself where it can; where libdw is missing it leaves
  # the .qdstrm, which nsys_finish (nsys-env.sh) imports and exports.
  if compgen -G "$d/nsys/*.qdstrm" >/dev/null; then
    nsys_finish "$d"/nsys/*.qdstrm >>"$log" 2>&1
    rm -f "$d"/nsys/*.qdstrm
  fi
  for f in "$d"/nsys/*.nsys-rep; do
    [ -f "${f%.nsys-rep}.sqlite" ] && continue
    LD_LIBRARY_PATH=$dw_lib:${LD_LIBRARY_PATH:-} "$NSYS" export --type sqlite \
      --force-overwrite true -o "${f%.nsys-rep}.sqlite" "$f" >>"$log" 2>&1
  done
  local exports=()
  for f in "$d"/nsys/commprof_*.sqlite; do [ -f "$f" ] && exports+=("$f"); done
  say "$name: ${#exports[@]} export(s): ${exports[*]##*/}"
  if [ "${#exports[@]}" -ne 2 ]; then
    say "$name: FAILED: expected 2 exports (commprof_<host>_0 and _1), see $log"
    failed=1
    return
  fi
  for f in "${exports[@]}"; do
    echo "-- $f" >>"$log"
    peek "$f" >>"$log" 2>&1
  done
  "$B/commprof" import-nsys "${exports[@]}" -o "$d/from-nsys" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  say "$name: import rc=$rc"
  [ "$rc" -eq 0 ] || failed=1
  "$B/commprof" report "$d/from-nsys" -o "$d/from-nsys/report.txt" >>"$log" 2>&1
  cat "$d/from-nsys/report.txt" >>"$log" 2>&1
  # shellcheck disable=SC2086  # flags: empty or one word
  scripts/compare-nsys-import.py "$d/run" "$d/from-nsys" $flags 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  say "$name: compare rc=$rc"
  [ "$rc" -eq 0 ] || failed=1
  rm -f "$d"/nsys/*.nsys-rep
  xz -T0 -6 "$d"/nsys/*.sqlite 2>>"$log"
}

run_case dp measured "" -- --workload dp --steps 3 --warmup-steps 2
run_case tp measured "" -- --workload tp --steps 3 --warmup-steps 2
run_case dp-all all --all-steps -- --workload dp --steps 2 --warmup-steps 1

say "gpu-nsys-capture: $([ "$failed" -eq 0 ] && echo "all checks passed" || echo "FAILED"); log $log"
exit "$failed"
