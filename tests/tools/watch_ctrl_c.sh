#!/bin/sh
# SPDX-License-Identifier: MIT
# Ctrl-C ends `commprof watch` with exit 0: it is started in the background, sent SIGINT once its
# first refresh is out (waiting at most 30 s for it), and its output and code are passed on.
# Usage: watch_ctrl_c.sh OUTFILE COMMPROF DIR
set -u
out=$1; bin=$2; dir=$3
rm -f "$out"  # a previous run's output must not read as this one's first refresh
"$bin" watch "$dir" --interval 0.2 >"$out" 2>&1 &
pid=$!
i=0
until grep -q '^# commprof watch: refresh 1 ' "$out" 2>/dev/null || [ $i -ge 300 ]; do
  i=$((i + 1)); sleep 0.1
done
kill -INT "$pid"
wait "$pid"
code=$?
cat "$out"
exit $code
