#!/bin/sh
# SPDX-License-Identifier: MIT
# SIGTERM to every rank of a running `commprof run` (as Slurm does when it preempts a job): each
# rank must end its current step, keep the steps measured so far in its rank file, and exit
# 128 + 15. Usage: sigterm_run.sh OUTDIR NRANKS COMMPROF -- launcher-and-command...
set -u
out=$1; nranks=$2; bin=$3; shift 4
. "$(dirname "$0")/run_helpers.sh"
rm -rf "$out"
# Once every rank has written its first step, signal the ranks.
start_run "$out" "$nranks" "$@"
# Only the ranks: their command line starts with the binary (this script's does not).
pkill -TERM -f "^$bin run .*--out $out" || { echo "FAIL: no rank to signal"; exit 1; }
# Bounded wait for the job to end by itself.
wait_run
cat "$out.log"
echo "exit code $rc"
[ $rc -eq 143 ] || { echo "FAIL: expected exit 143 (128 + SIGTERM)"; exit 1; }
grep -q "stopped by signal 15 after" "$out.log" || { echo "FAIL: no stop message"; exit 1; }
echo "ok"
