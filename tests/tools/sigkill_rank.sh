#!/bin/sh
# SPDX-License-Identifier: MIT
# SIGKILL to one rank of a running `commprof run` (a node crash, the OOM killer): the others must
# end promptly (no hang), and the rank files already written must stay whole and readable.
# Usage: sigkill_rank.sh OUTDIR NRANKS VICTIM COMMPROF -- launcher-and-command...
set -u
out=$1; nranks=$2; victim=$3; bin=$4; shift 5
rm -rf "$out"
start=$(date +%s)
"$@" >"$out.log" 2>&1 &
launcher=$!
i=0
while [ $i -lt 600 ]; do
  n=$(ls "$out"/rank-*.json 2>/dev/null | wc -l)
  [ "$n" -ge "$nranks" ] && break
  i=$((i + 1)); sleep 0.1
done
[ "$n" -ge "$nranks" ] || { echo "FAIL: ranks never wrote their files"; kill -9 $launcher; exit 1; }
# The victim is the rank process whose environment says it is rank $victim.
for pid in $(pgrep -f "^$bin run .*--out $out"); do
  if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$victim"; then
    kill -KILL "$pid" && echo "killed rank $victim (pid $pid)"
  fi
done
i=0
while kill -0 $launcher 2>/dev/null && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.1; done
if kill -0 $launcher 2>/dev/null; then echo "FAIL: job still running 30 s after the kill"; kill -9 $launcher; exit 1; fi
wait $launcher; rc=$?
echo "job exit code $rc after $(( $(date +%s) - start )) s"
[ $rc -ne 0 ] || { echo "FAIL: the job reported success"; exit 1; }
echo "ok"
