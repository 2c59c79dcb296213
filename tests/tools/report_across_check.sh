#!/bin/sh
# SPDX-License-Identifier: MIT
# `commprof report` shared among processes against one process: every format byte for byte,
# for 2 and 4 processes under the launcher (issue #32); chrome too, which process 0 alone writes
# from the timelines it gathers. The reference, 1 process, runs without a
# launcher (an MPI singleton, the single-process path).
# Usage: report_across_check.sh COMMPROF RANK_DIR LAUNCHER... (the launcher without its -np)
set -eu
prog=$1
dir=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for format in text json csv html prometheus chrome; do
  "$prog" report "$dir" --format "$format" --peak-busbw 200 -o "$tmp/one.$format"
  for n in 2 4; do
    if ! "$@" -n "$n" "$prog" report "$dir" --format "$format" --peak-busbw 200 \
      -o "$tmp/n$n.$format"; then
      echo "FAIL: $format on $n processes: exit status not 0"
      status=1
      continue
    fi
    if cmp "$tmp/one.$format" "$tmp/n$n.$format"; then
      echo "ok: $format on $n processes equals one process's ($(wc -c <"$tmp/one.$format") bytes)"
    else
      diff "$tmp/one.$format" "$tmp/n$n.$format" | head -10
      echo "FAIL: $format on $n processes differs from one process's"
      status=1
    fi
  done
done
exit $status
