#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs `commprof report DIR --format prometheus` and lints it with Prometheus' promtool
# (`check metrics`: the exposition grammar and the naming conventions), and checks that the
# families a dashboard needs are there.
# Without promtool it exits 77 (CTest: skipped), or 1 under COMMPROF_REQUIRE_PROMTOOL=1 (a host
# that installed it, CI: a skip there would hide the lint).
# Usage: promtool_check.sh COMMPROF RESULT_DIR
set -eu
prog=$1
dir=$2
if ! command -v promtool >/dev/null; then
  if [ "${COMMPROF_REQUIRE_PROMTOOL:-0}" = 1 ]; then
    echo "promtool_check.sh: COMMPROF_REQUIRE_PROMTOOL=1, but promtool is not installed: failed"
    exit 1
  fi
  echo "promtool_check.sh: skipped: promtool not installed (scripts/install-deps.sh --tests installs prometheus)"
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
