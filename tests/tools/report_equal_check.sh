#!/bin/sh
# SPDX-License-Identifier: MIT
# The report a run writes at its end (its ranks share the reduction over MPI) against an
# offline `commprof report` of the rank files the same run wrote: byte for byte, text and JSON.
# Usage: report_equal_check.sh COMMPROF RESULT_DIR
set -eu
prog=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prog" report "$dir" >"$tmp/report.txt"
"$prog" report "$dir" --format json -o "$tmp/report.json"
status=0
# A run that wrote no report: show how its log ended (the fault scripts keep it beside the
# directory), the only record of why once the test that ran it has passed.
if ! [ -e "$dir/report.txt" ] && [ -e "$dir.log" ]; then
  echo "no report.txt in $dir; the end of the run's log ($dir.log):"
  tail -n 40 "$dir.log"
fi
for f in report.txt report.json; do
  if cmp "$dir/$f" "$tmp/$f"; then
    echo "ok: $f of the run equals the offline report ($(wc -c <"$tmp/$f") bytes)"
  else
    diff "$dir/$f" "$tmp/$f" | head -20
    echo "FAIL: $f of the run differs from the offline report"
    status=1
  fi
done
exit $status
