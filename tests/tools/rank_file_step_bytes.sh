#!/bin/sh
# SPDX-License-Identifier: MIT
# A byte limit that K steps of each rank file given fit and K + 1 do not, whatever a step's size:
# for each file (one of the same job run without a limit: its header line, then a line per step
# as the run appends them), half a step past its first K steps, rounded up to whole PAGEs (1 for
# a file-size limit; a tmpfs allocates 4096-byte pages), summed over the files. Exits 1, naming
# the file, where a file holds fewer than K + 1 steps.
# Usage: rank_file_step_bytes.sh K PAGE FILE...
k=$1; page=$2; shift 2
total=0
for f in "$@"; do
  mid=$(LC_ALL=C awk -v k="$k" '
    NR <= k + 1 { upto += length($0) + 1 }
    NR == k + 2 { past = upto + length($0) + 1 }
    END { if (past == 0) exit 1; printf "%d\n", (upto + past) / 2 }' "$f") || {
    echo "rank_file_step_bytes.sh: $f holds fewer than $((k + 1)) steps" >&2
    exit 1
  }
  total=$((total + (mid + page - 1) / page * page))
done
echo "$total"
