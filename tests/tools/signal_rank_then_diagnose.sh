#!/bin/sh
# SPDX-License-Identifier: MIT
# A fault from outside a run: once every rank has written its first step, signal SIG (STOP, KILL)
# goes to one rank's process; the job must end (its --timeout, or the launcher noticing), and then
# `commprof diagnose` runs over the files, its output and exit code printed for check_run.sh.
# Usage: signal_rank_then_diagnose.sh OUT NRANKS VICTIM SIG COMMPROF -- LAUNCHER...
set -u
out=$1; nranks=$2; victim=$3; sig=$4; bin=$5; shift 6
. "$(dirname "$0")/run_helpers.sh"
rm -rf "$out"; mkdir -p "$(dirname "$out")"
start_run "$out" "$nranks" "$@"
pid=""
for p in $(pgrep -f "^$bin run .*--out $out"); do
  if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$victim"; then
    pid=$p
  fi
done
[ -n "$pid" ] || { echo "FAIL: no process of rank $victim found"; kill -TERM "$launcher"; exit 1; }
kill -"$sig" "$pid" && echo "sent SIG$sig to rank $victim (pid $pid)"
wait_run
echo "job exit code $rc"
"$bin" diagnose "$out"
echo "diagnose exit code $?"
