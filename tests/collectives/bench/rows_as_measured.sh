#!/bin/sh
# SPDX-License-Identifier: MIT
# `commprof bench` prints each size's row once that size is measured, not when the sweep ends.
#
#   rows_as_measured.sh COMMPROF bench [options...] --enable-test-hooks --test-corrupt-rank 0
#
# One rank without a launcher: its stdout and stderr go to one file in the order the process
# wrote them (commprof's log flushes stdout before each message). The test hook corrupts one
# received element of every size, so each size's verification warns on stderr before that
# size's row can exist. A bench printing rows as sizes complete alternates, size by size:
# warning, row, warning, row, ...; one printing its table at the end shows every warning before
# the first row. No timing is involved: only the order of the process's own writes.
set -u
out=$(mktemp) || exit 99
trap 'rm -f "$out"' EXIT

"$@" >"$out" 2>&1
status=$?
cat "$out"
if [ "$status" -ne 1 ]; then
  echo "rows_as_measured.sh: FAILED: exit code $status, expected 1 (the corrupted elements)"
  exit 1
fi
# The events in order: "warn <bytes>" for each warning, "row <bytes>" for each table row.
events=$(awk '/ warning: [a-z]+ of [0-9]+ B: [0-9]+ wrong elements$/ {
                for (i = 1; i < NF; i++) if ($i == "of") { print "warn " $(i + 1); break }
                next
              }
              /^ +[0-9]+ +[0-9]+ +[a-z0-9]+ +(sum|none) / { print "row " $1 }' "$out")
echo "rows_as_measured.sh: events in order:"
echo "$events"
echo "$events" | awk '
  NR % 2 == 1 { if ($1 != "warn") bad = 1; bytes = $2 }
  NR % 2 == 0 { if ($1 != "row" || $2 != bytes) bad = 1; sizes++ }
  END { exit (bad || NR % 2 != 0 || sizes < 3) }' || {
  echo "rows_as_measured.sh: FAILED: expected, per size, its warning then its row (3 sizes or more)"
  exit 1
}
echo "rows_as_measured.sh: each row came right after its own size's verification"
