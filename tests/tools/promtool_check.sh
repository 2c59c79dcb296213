#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs `commprof report DIR --format prometheus` and lints it with Prometheus' promtool
# (`check metrics`: the exposition grammar and the naming conventions), and checks that the
# families a dashboard needs are there.
# Usage: promtool_check.sh COMMPROF RESULT_DIR
set -eu
prog=$1
dir=$2
if ! command -v promtool >/dev/null; then
  echo "promtool not installed (scripts/install-deps.sh --tests installs prometheus): skipping"
  exit 77
fi
out=$("$prog" report "$dir" --format prometheus)
printf '%s\n' "$out" | promtool check metrics
status=0
for family in commprof_step_time_seconds commprof_busy_seconds commprof_overlap_ratio \
              commprof_bus_bandwidth_gbs commprof_group_bus_bandwidth_gbs \
              commprof_wait_caused_seconds; do
  if printf '%s\n' "$out" | grep -q "^$family{"; then
    echo "ok: $family"
  else
    echo "FAIL: no sample of $family"
    status=1
  fi
done
exit $status
