#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# slurm/workload.sbatch on a real one-node Slurm cluster: starts munged, slurmctld and slurmd on
# this machine (scripts/slurm-local-cluster.sh), submits the script for a 4-task host-backend
# run through sbatch and srun --mpi=pmix, waits for it (bounded), then checks what a user relies
# on: the job COMPLETED with exit 0, one valid rank file per rank of one 4-rank MPI world, and
# the aggregated report naming all 4 ranks. The daemons it started are always stopped.
# With --script nsys.sbatch --fake-nsys BIN: slurm/nsys.sbatch, every task under
# scripts/nsys-profile-rank.sh and a stand-in nsys (tests/tools/fake_nsys.sh); also checks one
# report per task, named by host and Slurm rank, with the measured-steps capture range.
#
#   slurm_workload_test.sh --source DIR --commprof BIN --rank-check BIN --work DIR
#                          [--script NAME --fake-nsys BIN]
#
# Exit 0 passed, 1 failed, 77 skipped: only where this system cannot run the daemons (not root,
# Slurm or munge not installed, munged cannot start). COMMPROF_REQUIRE_SLURM=1 (CI) turns a skip
# into a failure, so CI cannot pass without having run the job.
set -uo pipefail

readonly SKIP=77
# Bounds, all well inside the CTest TIMEOUT (300 s) so that cleanup always runs before CTest
# would kill this script (the daemons are detached: a killed script would leave them running).
readonly JOB_LIMIT_S=150

source_dir="" commprof="" rank_check="" work="" script=workload.sbatch fake_nsys=""
while [ $# -gt 0 ]; do
  case "$1" in
    --script) script=$2; shift 2 ;;
    --fake-nsys) fake_nsys=$2; shift 2 ;;
    --source) source_dir=$2; shift 2 ;;
    --commprof) commprof=$2; shift 2 ;;
    --rank-check) rank_check=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "slurm_workload_test: unknown argument '$1'" >&2; exit 1 ;;
  esac
done
for v in source_dir commprof rank_check work; do
  [ -n "${!v}" ] || { echo "slurm_workload_test: --${v//_/-} is required" >&2; exit 1; }
done

cluster_script=$source_dir/scripts/slurm-local-cluster.sh
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# The cluster's state lives under /tmp, not the build tree: unix socket paths (munge, PMIx in
# the slurmd spool) must stay under 108 bytes whatever the checkout path is.
cluster=$(mktemp -d /tmp/commprof-slurm.XXXXXX) || exit 1
rm -rf "$work"
mkdir -p "$work"
results=$work/results

# shellcheck disable=SC2317  # reached through the trap below, not a call
cleanup() {
  local status=$?
  # Ends the cluster's jobs, its daemons and anything its jobs left (see the script's stop).
  "$cluster_script" stop "$cluster" || true
  if [ "$status" -ne 0 ] && [ "$status" -ne "$SKIP" ] && [ -d "$cluster/log" ]; then
    for f in "$cluster"/log/*.log; do echo "----- $f (last 30 lines)"; tail -n 30 "$f"; done
  fi
  rm -rf "$cluster"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

skip_or_fail() {
  if [ "${COMMPROF_REQUIRE_SLURM:-0}" = 1 ]; then
    echo "FAIL: COMMPROF_REQUIRE_SLURM=1 but the Slurm test cannot run here: $*"
    exit 1
  fi
  echo "SKIP: $*"
  exit "$SKIP"
}

# ---- 1. the cluster ----------------------------------------------------------------------------
timeout 60 "$cluster_script" start "$cluster" 4
status=$?
case "$status" in
  0) ;;
  "$SKIP") skip_or_fail "the local Slurm cluster cannot run on this system (see above)" ;;
  *) echo "FAIL: the local Slurm cluster did not come up (exit $status)"; exit 1 ;;
esac
# Slurm's commands find the test cluster through SLURM_CONF. Given per command, not exported, so
# that this script and its other children never look like one of the cluster's processes.
conf=$cluster/etc/slurm.conf

# ---- 2. submit the workload script as a user would, overriding the GPU-cluster defaults -------
args=(--backend host --workload dp --model tiny --steps 2 --warmup-steps 1)
export_vars=ALL,COMMPROF="$commprof",RESULTS="$results",SRUN_MPI=pmix
if [ -n "$fake_nsys" ]; then
  export_vars+=",NSYS=$fake_nsys,NSYS_WRAPPER=$source_dir/scripts/nsys-profile-rank.sh"
fi
job=$(SLURM_CONF=$conf sbatch --parsable --partition=debug --nodes=1 --ntasks=4 --ntasks-per-node=4 \
  --gpus-per-node=0 --cpus-per-task=1 --time=5 --output="$work/job.out" \
  --export="$export_vars" "$source_dir/slurm/$script" "${args[@]}")
[ -n "$job" ] || { echo "FAIL: sbatch did not submit"; exit 1; }
echo "submitted job $job"

# ---- 3. wait for it, bounded -------------------------------------------------------------------
waited=0
while [ -n "$(SLURM_CONF=$conf squeue -h -j "$job" -o %T 2>/dev/null)" ]; do
  if [ "$waited" -ge "$JOB_LIMIT_S" ]; then
    echo "FAIL: job $job still in the queue after ${JOB_LIMIT_S} s:"
    SLURM_CONF=$conf squeue -j "$job" -o '%i %T %r %M' || true
    [ -f "$work/job.out" ] && cat "$work/job.out"
    exit 1
  fi
  sleep 1
  waited=$((waited + 1))
done
echo "job $job left the queue after ${waited} s"
echo "----- job output ($work/job.out)"
cat "$work/job.out" 2>/dev/null || echo "(none)"
echo "-----"

# ---- 4. what a user relies on ------------------------------------------------------------------
job_info=$(SLURM_CONF=$conf scontrol show job "$job" 2>&1)
if grep -q "JobState=COMPLETED" <<<"$job_info" && grep -q "ExitCode=0:0" <<<"$job_info"; then
  pass "job $job COMPLETED, ExitCode=0:0"
else
  fail "job $job did not complete cleanly: $(grep -o 'JobState=[A-Z_]*\|ExitCode=[0-9:]*' <<<"$job_info" | tr '\n' ' ')"
fi

for r in 0 1 2 3; do
  [ -s "$results/rank-$r.json" ] || fail "rank-$r.json missing or empty"
done
[ ! -e "$results/rank-4.json" ] || fail "rank-4.json exists: more than 4 ranks"
# Every file is valid, from one 4-rank world (not 4 MPI singletons, which is what a broken
# srun/PMIx hand-off gives), with every collective seen by all its members.
if COMMPROF_RUN_DIR=$results COMMPROF_RUN_NRANKS=4 COMMPROF_RUN_STEPS=3 "$rank_check" --gtest_brief=1; then
  pass "rank files 0..3: one 4-rank world, consistent timelines"
else
  fail "rank files do not form one consistent 4-rank run"
fi

# The aggregated report, written by the batch script after srun: its header counts 4 of 4 ranks,
# and its per-rank table has a row "<rank> <host> ..." for each, all on this machine.
host=$(hostname)
if [ -s "$results/report.txt" ]; then
  pass "report.txt written"
  grep -q "^# commprof report: 4 of 4 ranks, from 4 rank file(s)$" "$results/report.txt" ||
    fail "report.txt does not say it read 4 of 4 ranks"
  per_rank=$(sed -n '/^## Per rank/,/^$/p' "$results/report.txt")
  missing=""
  for r in 0 1 2 3; do
    grep -Eq "^ *$r +$host " <<<"$per_rank" || missing="$missing $r"
  done
  if [ -z "$missing" ]; then
    pass "report.txt has a per-rank row for ranks 0..3 on $host"
  else
    fail "report.txt's per-rank table lacks rank(s)$missing on $host"
  fi
else
  fail "report.txt missing or empty"
fi
for f in report.json report.html; do [ -s "$results/$f" ] || fail "$f missing or empty"; done
# report.json was reduced by the 4 srun tasks together: the same bytes as one process's.
if "$commprof" report "$results" --format json --output "$work/report-one-process.json" &&
  cmp -s "$results/report.json" "$work/report-one-process.json"; then
  pass "report.json of 4 srun tasks equals one process's"
else
  fail "report.json of 4 srun tasks differs from one process's"
fi
grep -q "run exit 0, report exit 0" "$work/job.out" || fail "the batch script did not report success"

# ---- 5. nsys.sbatch: one report per task, by host and Slurm rank, capturing the measured steps -
if [ -n "$fake_nsys" ]; then
  for r in 0 1 2 3; do
    base=$results/nsys/commprof_${host}_$r
    if [ -f "$base.nsys-rep" ] && [ -f "$base.args" ] && [ -f "$base.env" ]; then
      pass "task $r: $base.nsys-rep"
      # The rank in the name is the task's: srun --mpi=pmix sets PMIX_RANK = SLURM_PROCID.
      grep -qx "SLURM_PROCID=$r" "$base.env" || fail "task $r: SLURM_PROCID=$r not in $base.env"
      grep -qx -- "--output=$results/nsys/commprof_%h_$r" "$base.args" ||
        fail "task $r: nsys --output is not $results/nsys/commprof_%h_$r"
      for a in --trace=cuda,nvtx,osrt --capture-range=nvtx --nvtx-capture=measured_steps@commprof \
        --capture-range-end=stop --force-overwrite=true "$commprof"; do
        grep -qx -- "$a" "$base.args" || fail "task $r: nsys was not given $a"
      done
    else
      fail "task $r: no report $base.nsys-rep (with .args and .env) from the stand-in nsys"
    fi
  done
  [ ! -e "$results/nsys/commprof_${host}_4.nsys-rep" ] || fail "a fifth nsys report"
fi

if [ "$failures" -ne 0 ]; then
  echo "slurm_workload_test: $failures check(s) failed; results kept in $work"
  exit 1
fi
echo "slurm_workload_test: passed (job $job, ${waited} s in the queue)"
exit 0
