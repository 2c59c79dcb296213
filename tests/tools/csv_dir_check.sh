#!/bin/sh
# SPDX-License-Identifier: MIT
# `report --format csv -o DIR/` against `report --format csv` on stdout: DIR holds exactly one
# <table>.csv per "# table: <table>" section, each with that section's text.
# Usage: csv_dir_check.sh COMMPROF RANK_DIR CSV_DIR
set -eu
prog=$1
ranks=$2
dir=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prog" report "$ranks" --format csv >"$tmp/all.csv"
# Split the stream: each section's lines up to the blank line that ends it.
awk -v out="$tmp" '
  /^# table: / { name = $3; file = out "/" name ".csv"; printf "" > file; next }
  /^$/ { name = ""; next }
  name != "" { print >> file }
' "$tmp/all.csv"
[ -d "$dir" ] || { echo "FAIL: no directory $dir"; exit 1; }
status=0
want=$(cd "$tmp" && ls -- *.csv | grep -v '^all.csv$' | sort | tr '\n' ' ')
got=$(cd "$dir" && { ls -- *.csv 2>/dev/null || true; } | sort | tr '\n' ' ')
# Two empty lists agree, and would pass a report that wrote no table at all.
if [ -z "$want" ]; then
  echo "FAIL: the csv stream holds no '# table:' section"
  status=1
fi
if [ -z "$got" ]; then
  echo "FAIL: $dir holds no .csv table"
  status=1
fi
if [ "$want" != "$got" ]; then
  echo "FAIL: tables in $dir: '$got', expected '$want'"
  status=1
fi
for f in $want; do
  if cmp -s "$tmp/$f" "$dir/$f"; then
    echo "ok: $f ($(wc -l <"$dir/$f") lines)"
  else
    echo "FAIL: $dir/$f differs from its section of the stream"
    diff "$tmp/$f" "$dir/$f" | head -5
    status=1
  fi
done
exit $status
