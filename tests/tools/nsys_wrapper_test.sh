#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/nsys-profile-rank.sh with a stand-in nsys (tests/tools/fake_nsys.sh: records its
# arguments where the report would go, then runs the program): under a real launcher at 4 ranks
# on the host backend, every rank's report is named by host and rank, the capture range is the
# measured steps, and commprof's results are intact; alone, the rank variables of srun and the
# PMI fallbacks, and the errors (no rank, no nsys, no program) with their messages and exit 2.
#
#   nsys_wrapper_test.sh WRAPPER FAKE_NSYS COMMPROF RANK_FILES_CHECK WORK -- LAUNCHER...
# LAUNCHER: the launcher line without the program (mpirun -n 4 --oversubscribe ...).
set -uo pipefail

if [ $# -lt 7 ] || [ "$6" != -- ]; then
  echo "usage: $0 WRAPPER FAKE_NSYS COMMPROF RANK_FILES_CHECK WORK -- LAUNCHER..." >&2
  exit 99
fi
wrapper=$1 fake=$2 commprof=$3 rank_check=$4 work=$5
shift 6
launcher=("$@")

failed=0
fail() {
  echo "FAILED: $*"
  failed=1
}
pass() { echo "ok: $*"; }
# check NAME COMMAND... : passes when COMMAND succeeds.
check() {
  local name=$1
  shift
  if "$@"; then pass "$name"; else fail "$name"; fi
}
rm -rf "$work"
mkdir -p "$work"
host=$(uname -n)

# Runs the wrapper alone with exactly the given rank variables (the others removed).
alone() {
  env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK -u SLURM_PROCID "$@"
}

# expect_error NAME MESSAGE-ERE COMMAND... : exit 2 and the message on stderr.
expect_error() {
  local name=$1 pattern=$2 out status
  shift 2
  out=$("$@" 2>&1 >/dev/null)
  status=$?
  echo "--- $name: exit $status: $out"
  if [ "$status" -ne 2 ]; then
    fail "$name: exit $status, expected 2"
  elif ! grep -Eq -- "$pattern" <<<"$out"; then
    fail "$name: message does not match /$pattern/"
  else
    pass "$name"
  fi
}

# --- Errors: what is missing is named, exit 2, nothing run --------------------------------------
expect_error "no rank variable" \
  "^nsys-profile-rank.sh: error: no rank in the environment: none of OMPI_COMM_WORLD_RANK \(mpirun\), PMIX_RANK, PMI_RANK or SLURM_PROCID \(srun\) is set" \
  alone "$wrapper" --nsys "$fake" -- true
expect_error "rank not a number" "OMPI_COMM_WORLD_RANK='x' is not a rank number" \
  alone OMPI_COMM_WORLD_RANK=x "$wrapper" --nsys "$fake" -- true
expect_error "--nsys not a file" "nsys not found: '/no/such/nsys' is not an executable file" \
  alone SLURM_PROCID=0 "$wrapper" --nsys /no/such/nsys -- true
mkdir -p "$work/empty-path"
expect_error "nsys not on PATH" "nsys not found: not on PATH and neither --nsys nor NSYS given" \
  alone SLURM_PROCID=0 PATH="$work/empty-path" "$BASH" "$wrapper" -- true
expect_error "NSYS not on PATH" "nsys not found: 'nsys-2099' is not on PATH" \
  alone SLURM_PROCID=0 NSYS=nsys-2099 "$wrapper" -- true
expect_error "no program" "no program to profile" alone SLURM_PROCID=0 "$wrapper" --nsys "$fake" --
expect_error "extra args without --" "must end with -- before the program" \
  alone SLURM_PROCID=0 "$wrapper" --nsys "$fake" -- --force-overwrite=true true
expect_error "unknown option" "unknown option '--bogus'" \
  alone SLURM_PROCID=0 "$wrapper" --bogus -- true
expect_error "bad --capture" "--capture must be 'measured' or 'all', not 'warmup'" \
  alone SLURM_PROCID=0 "$wrapper" --nsys "$fake" --capture warmup -- true

# --- Which variable gives the rank (--print: the nsys line, nothing run) --------------------------
expect_output() {
  local name=$1 want=$2 out
  shift 2
  out=$("$@" 2>&1)
  echo "--- $name: $out"
  if grep -Fq -- "$want" <<<"$out"; then pass "$name"; else fail "$name: no '$want'"; fi
}
expect_output "srun: SLURM_PROCID" "--output=$work/p/commprof_%h_5 " \
  alone SLURM_PROCID=5 "$wrapper" --print --nsys "$fake" --out "$work/p" -- prog
expect_output "PMIX_RANK" "--output=$work/p/commprof_%h_2 " \
  alone PMIX_RANK=2 "$wrapper" --print --nsys "$fake" --out "$work/p" -- prog
# A launcher inside a batch job: the inherited SLURM_PROCID=0 must not win.
expect_output "PMI_RANK before an inherited SLURM_PROCID" "--output=$work/p/commprof_%h_3 " \
  alone PMI_RANK=3 SLURM_PROCID=0 "$wrapper" --print --nsys "$fake" --out "$work/p" -- prog
expect_output "mpirun: OMPI_COMM_WORLD_RANK first" "--output=$work/p/commprof_%h_1 " \
  alone OMPI_COMM_WORLD_RANK=1 PMIX_RANK=1 SLURM_PROCID=0 "$wrapper" --print --nsys "$fake" \
  --out "$work/p" -- prog
expect_output "--capture all: no capture range" \
  "$fake profile --trace=cuda,nvtx --output=$work/p/commprof_%h_0 -s none prog a" \
  alone SLURM_PROCID=0 "$wrapper" --print --nsys "$fake" --out "$work/p" --trace cuda,nvtx \
  --capture all -- -s none -- prog a
check "--print creates nothing" [ ! -e "$work/p" ]

# --- 4 ranks under the launcher, host backend, tp2 x dp2 ------------------------------------------
run_out=$work/run
nsys_out=$work/nsys
log=$work/launch.log
"${launcher[@]}" "$wrapper" --nsys "$fake" --out "$nsys_out" -- --force-overwrite=true -- \
  "$commprof" run --backend host --workload hybrid --tp 2 --dp 2 --model tiny --steps 2 \
  --warmup-steps 1 --out "$run_out" >"$log" 2>"$log.err"
status=$?
# stderr after stdout: under mpirun the two reach the launcher in any order, and captured
# together one could split a line of the other.
cat "$log.err" >>"$log"
cat "$log"
check "launch exit 0 (got $status)" [ "$status" -eq 0 ]
check "rank 0 says where its report goes" grep -q "^nsys-profile-rank.sh: rank 0 \
(OMPI_COMM_WORLD_RANK) -> $nsys_out/commprof_<host>_0.nsys-rep; capturing the measured steps$" "$log"
check "only rank 0 speaks" [ "$(grep -c '^nsys-profile-rank.sh: ' "$log")" -eq 1 ]
check "commprof's own report covers 4 ranks" \
  grep -q "^# commprof report: 4 of 4 ranks, from 4 rank file(s)$" "$log"

reports=$(find "$nsys_out" -name '*.nsys-rep' | wc -l)
check "4 reports (found $reports)" [ "$reports" -eq 4 ]
for r in 0 1 2 3; do
  base=$nsys_out/commprof_${host}_$r
  check "rank $r: $base.nsys-rep" [ -f "$base.nsys-rep" ]
  # Exactly this nsys line: trace, per-rank output, the capture range, the extra argument, then
  # commprof with its arguments untouched.
  expected=$(printf '%s\n' --trace=cuda,nvtx,osrt "--output=$nsys_out/commprof_%h_$r" \
    --capture-range=nvtx --nvtx-capture=measured_steps@commprof --capture-range-end=stop \
    --force-overwrite=true "$commprof" run --backend host --workload hybrid --tp 2 --dp 2 \
    --model tiny --steps 2 --warmup-steps 1 --out "$run_out")
  if [ -f "$base.args" ] && [ "$(cat "$base.args")" = "$expected" ]; then
    pass "rank $r: nsys arguments"
  else
    fail "rank $r: nsys arguments differ:"
    diff <(echo "$expected") "$base.args"
  fi
  check "rank $r: OMPI_COMM_WORLD_RANK=$r" grep -qx "OMPI_COMM_WORLD_RANK=$r" "$base.env"
  check "rank $r: NSYS_NVTX_PROFILER_REGISTER_ONLY=0" \
    grep -qx "NSYS_NVTX_PROFILER_REGISTER_ONLY=0" "$base.env"
done

# commprof's results under the wrapper: every rank file complete (1 warm-up + 2 steps).
if COMMPROF_RUN_DIR=$run_out COMMPROF_RUN_NRANKS=4 COMMPROF_RUN_STEPS=3 "$rank_check"; then
  pass "rank files intact"
else
  fail "rank files"
fi

# The program's exit status comes back through the wrapper and nsys.
alone SLURM_PROCID=0 "$wrapper" --nsys "$fake" --out "$work/exit" -- sh -c 'exit 7'
status=$?
check "the program's exit status comes back (7, got $status)" [ "$status" -eq 7 ]

if [ "$failed" -eq 0 ]; then echo "nsys_wrapper_test: all checks passed"; fi
exit "$failed"
