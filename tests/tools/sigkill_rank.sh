#!/bin/sh
# SPDX-License-Identifier: MIT
# SIGKILL to one rank of a running `commprof run` (a node crash, the OOM killer): the others must
# end promptly (no hang), and the rank files already written must stay whole and readable.
# Usage: sigkill_rank.sh OUTDIR NRANKS VICTIM COMMPROF -- launcher-and-command...
set -u
out=$1; nranks=$2; victim=$3; bin=$4; shift 5
. "$(dirname "$0")/run_helpers.sh"
rm -rf "$out"; mkdir -p "$(dirname "$out")"
start=$(date +%s)
start_run "$out" "$nranks" "$@"
# The victim is the rank process whose environment says it is rank $victim.
killed=0
for pid in $(rank_pids "$bin" "$out"); do
  if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$victim"; then
    kill -KILL "$pid" && echo "killed rank $victim (pid $pid)" && killed=1
  fi
done
# Without a victim the test would fail later as "still running", naming the wrong cause: it fails
# now, the job ended through its launcher (which passes SIGTERM on to the ranks) instead of
# waited for.
if [ $killed -eq 0 ]; then
  echo "FAIL: no process of rank $victim found (OMPI_COMM_WORLD_RANK in its environment)"
  kill -TERM "$launcher" 2>/dev/null
  wait_run
  exit 1
fi
wait_run
echo "job exit code $rc after $(( $(date +%s) - start )) s"
[ $rc -ne 0 ] || { echo "FAIL: the job reported success"; exit 1; }
echo "ok"
