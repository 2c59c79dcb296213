#!/bin/sh
# SPDX-License-Identifier: MIT
# `commprof watch DIR --prometheus FILE`: one refresh, then the file linted with Prometheus'
# promtool (`check metrics`) and the families a dashboard needs looked for: the window's
# percentiles, busbw and calls, each rank file's last change (liveness) and the stalls.
# Without promtool it exits 77 (CTest: skipped), or 1 under COMMPROF_REQUIRE_PROMTOOL=1.
# Usage: watch_promtool_check.sh COMMPROF DIR OUTFILE
set -eu
prog=$1; dir=$2; file=$3
if ! command -v promtool >/dev/null; then
  if [ "${COMMPROF_REQUIRE_PROMTOOL:-0}" = 1 ]; then
    echo "watch_promtool_check.sh: COMMPROF_REQUIRE_PROMTOOL=1, but promtool is not installed: failed"
    exit 1
  fi
  echo "watch_promtool_check.sh: skipped: promtool not installed"
  exit 77
fi
rm -f "$file"
"$prog" watch "$dir" --iterations 1 --stall-s 60 --prometheus "$file" >/dev/null
promtool check metrics <"$file"
status=0
# (Braces are literal: grep -E reads a brace not followed by a count as itself.)
for sample in 'commprof_window_time_seconds{comm_name="dp0",collective="allreduce",size_bucket_bytes="[0-9]*",percentile="99"} [0-9.e-]*$' \
              'commprof_window_bus_bandwidth_gbs{comm_name="dp0",' 'commprof_window_calls{' \
              'commprof_rank_file_updated_timestamp_seconds{rank="3"} [0-9.e+]*$' \
              'commprof_unfinished_seconds{rank="0",comm_name="dp0",collective="allreduce",seq="1000"} (6[1-9]|[7-9][0-9]|[0-9]{3,})[0-9.e+]*$'; do
  if ! grep -Eq "^$sample" "$file"; then
    echo "FAIL: no sample matching $sample"
    status=1
  fi
done
[ $status -eq 0 ] && echo "ok"
exit $status
