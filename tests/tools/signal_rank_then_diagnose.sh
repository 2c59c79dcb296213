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
for p in $(rank_pids "$bin" "$out"); do
  if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$victim"; then
    pid=$p
  fi
done
[ -n "$pid" ] || { echo "FAIL: no process of rank $victim found"; kill -TERM "$launcher"; exit 1; }
# A rank stopped between steps leaves the others in the step's start barrier, which has no
# timeout (only the streams have one): if the job has not ended within 10 s, the stop landed
# there, so the rank is continued and stopped again, up to 5 times.
tries=0
while :; do
  kill -"$sig" "$pid" && echo "sent SIG$sig to rank $victim (pid $pid)"
  tries=$((tries + 1))
  [ "$sig" = STOP ] && [ $tries -lt 5 ] || break
  _i=0
  while kill -0 "$launcher" 2>/dev/null && [ $_i -lt $((100 * scale)) ]; do
    _i=$((_i + 1)); sleep 0.1
  done
  kill -0 "$launcher" 2>/dev/null || break
  echo "stopped between steps: continuing rank $victim and stopping it again"
  kill -CONT "$pid"; sleep 0.3
done
wait_run
echo "job exit code $rc"
"$bin" diagnose "$out"
echo "diagnose exit code $?"
