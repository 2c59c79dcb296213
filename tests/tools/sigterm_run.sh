#!/bin/sh
# SPDX-License-Identifier: MIT
# SIGTERM to every rank of a running `commprof run` (as Slurm does when it preempts a job): each
# rank must end its current step, keep the steps measured so far in its rank file, and exit
# 128 + 15. Usage: sigterm_run.sh OUTDIR NRANKS COMMPROF -- launcher-and-command...
set -u
out=$1; nranks=$2; bin=$3; shift 4
rm -rf "$out"
"$@" >"$out.log" 2>&1 &
launcher=$!
# Wait (bounded) until every rank has written its first step, then signal the ranks.
i=0
while [ $i -lt 600 ]; do
  n=$(ls "$out"/rank-*.json 2>/dev/null | wc -l)
  [ "$n" -ge "$nranks" ] && break
  i=$((i + 1)); sleep 0.1
done
if [ "$n" -lt "$nranks" ]; then echo "FAIL: ranks never wrote their files"; kill -9 $launcher; exit 1; fi
# Only the ranks: their command line starts with the binary (this script's does not).
pkill -TERM -f "^$bin run .*--out $out" || { echo "FAIL: no rank to signal"; exit 1; }
# Bounded wait for the job to end by itself.
i=0
while kill -0 $launcher 2>/dev/null && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.1; done
if kill -0 $launcher 2>/dev/null; then echo "FAIL: still running 30 s after SIGTERM"; kill -9 $launcher; exit 1; fi
wait $launcher; rc=$?
cat "$out.log"
echo "exit code $rc"
[ $rc -eq 143 ] || { echo "FAIL: expected exit 143 (128 + SIGTERM)"; exit 1; }
grep -q "stopped by signal 15 after" "$out.log" || { echo "FAIL: no stop message"; exit 1; }
echo "ok"
