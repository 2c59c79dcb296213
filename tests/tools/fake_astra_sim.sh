#!/bin/sh
# SPDX-License-Identifier: MIT
# A stand-in for ASTRA-sim's analytical binary (none is packaged) for scripts/astra-sim-check.sh's
# test: it refuses a system configuration with an endpoint delay of 0 (the real one aborts on a
# ZeRO step), then prints one "sys[N] finished" line per rank with the ticks in FAKE_ASTRA_TICKS
# (rank 0 first), or, with FAKE_ASTRA_STALL=1, ASTRA-sim's stall: no such line, "unreleased
# nodes", and exit 0 all the same.
system=""
for a in "$@"; do
  case "$a" in --system-configuration=*) system=${a#*=} ;; esac
done
grep -q '"endpoint-delay": 0,' "$system" && { echo "endpoint delay 0" >&2; exit 3; }
if [ "${FAKE_ASTRA_STALL:-0}" = 1 ]; then
  echo "[workload] [error] Hardware Resource sys.id=0 has unreleased nodes"
  exit 0
fi
r=0
for t in $FAKE_ASTRA_TICKS; do
  echo "[statistics] sys[$r] finished, $t cycles, exposed communication $((t / 10)) cycles."
  r=$((r + 1))
done
