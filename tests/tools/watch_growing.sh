#!/bin/sh
# SPDX-License-Identifier: MIT
# `commprof watch` on a directory that grows while it runs: a `commprof run` started in the
# background appends a step at a time; watch refreshes three times, then the run is stopped
# (SIGTERM through its launcher). Prints watch's output; exits with watch's code.
# Usage: watch_growing.sh OUTDIR NRANKS COMMPROF -- launcher-and-run-command...
set -u
out=$1; nranks=$2; bin=$3; shift 4
. "$(dirname "$0")/run_helpers.sh"
rm -rf "$out"; mkdir -p "$(dirname "$out")"
start_run "$out" "$nranks" "$@"
"$bin" watch "$out" --interval 0.5 --iterations 3 >"$out.watch" 2>&1
code=$?
kill -TERM "$launcher" 2>/dev/null
wait_run
cat "$out.watch"
exit $code
