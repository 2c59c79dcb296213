#!/bin/sh
# SPDX-License-Identifier: MIT
# A signal to a running `commprof run` (as Slurm sends SIGTERM when it preempts a job, a user
# Ctrl-C SIGINT): the ranks agree at the next step boundary and all stop there, each keeping the
# steps measured so far in its rank file, and the job exits 128 + the signal.
# Usage: sigterm_run.sh OUTDIR NRANKS COMMPROF [TERM|INT [all|one|launcher]] -- launcher-and-command...
#   all: every rank gets the signal; one: only one rank does (the others learn it at the step
#   boundary); launcher: the launcher does (Ctrl-C in the terminal that runs mpirun), which
#   passes a signal of its choice on to the ranks (Open MPI: SIGTERM), and exits with a code of
#   its own (Open MPI: 1): the ranks must still stop at one step and keep what they measured.
set -u
out=$1; nranks=$2; bin=$3; shift 3
sig=TERM; who=all
[ "$1" != "--" ] && { sig=$1; shift; }
[ "$1" != "--" ] && { who=$1; shift; }
shift  # --
case $sig in TERM) num=15 ;; INT) num=2 ;; *) echo "FAIL: unknown signal $sig"; exit 1 ;; esac
. "$(dirname "$0")/run_helpers.sh"
rm -rf "$out"
# Once every rank has written its first step, signal the ranks.
start_run "$out" "$nranks" "$@"
pids=$(rank_pids "$bin" "$out")
[ -n "$pids" ] || { echo "FAIL: no rank to signal"; exit 1; }
[ "$who" = one ] && pids=$(echo "$pids" | head -n 1)
[ "$who" = launcher ] && pids=$launcher
kill -"$sig" $pids
# Bounded wait for the job to end by itself.
wait_run
cat "$out.log"
echo "exit code $rc (SIG$sig to $who)"
if [ "$who" = launcher ]; then
  [ $rc -ne 0 ] || { echo "FAIL: the job reported success"; exit 1; }
  grep -q "stopped by signal [0-9]* after" "$out.log" || { echo "FAIL: no stop message"; exit 1; }
else
  [ $rc -eq $((128 + num)) ] || { echo "FAIL: expected exit $((128 + num)) (128 + SIG$sig)"; exit 1; }
  grep -q "stopped by signal $num after" "$out.log" || { echo "FAIL: no stop message"; exit 1; }
fi
# The summary counts the steps run, not the --steps asked for (each case here has no warm-up
# or is stopped during it, where no summary is printed).
n=$(sed -n 's/.*stopped by signal [0-9]* after \([0-9]*\) of.*/\1/p' "$out.log" | head -n 1)
if grep -q "measured steps after" "$out.log"; then
  grep -q "; $n measured steps after 0 warm-up" "$out.log" ||
    { echo "FAIL: the summary does not say the $n steps run"; exit 1; }
fi
echo "ok"
