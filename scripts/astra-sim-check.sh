#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A measured step through ASTRA-sim (issue #31 item 6): `commprof export-chakra` writes the step's
# Chakra traces, communicator groups and fitted analytical network; ASTRA-sim's analytical
# (congestion-unaware) simulator replays them; the script prints what ASTRA-sim simulated per rank
# beside commprof's own replay of the same step (`commprof whatif`, unchanged and serialised).
#
#   scripts/astra-sim-check.sh RUN_DIR ASTRA_BIN [WORK_DIR]
#   e.g. BUILD=build/host scripts/astra-sim-check.sh results/ \
#          astra-sim/build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware
#
# RUN_DIR: a `commprof run` result whose first step with per-op timing is exported (the default
# sampled timing times one step per rank; whatif's "measured" is the mean over the timed steps,
# so the two are the same step when one step was timed). ASTRA_BIN: ASTRA-sim's analytical
# binary (build it from astra-sim/astra-sim as scripts/astra-sim-build.md says; not a Debian
# package). The system configuration written here gives every network dimension ASTRA-sim's
# ring algorithm for each collective (what the fitted network's Ring dimensions assume), one
# chunk in flight per dimension and an endpoint delay of 1 ns (0 makes ASTRA-sim's analytical
# event queue abort on an all-gather-heavy step, a ZeRO one; 1 ns moves no other step's tick), so
# what ASTRA-sim adds is its own model; remote memory: none. ASTRA-sim's tick is 1 ns. ASTRA-sim
# exits 0 even when a rank never finishes (a stall): no "sys[N] finished" line for every rank
# is a failure here, with the log's "unreleased nodes" lines.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '3,22p' "$0" >&2; exit 2; }
run=$1 astra=$2
work=${3:-$(mktemp -d)}
build=${BUILD:-build/host}
commprof=$build/commprof
[ -x "$commprof" ] || { echo "no $commprof (set BUILD)" >&2; exit 2; }
[ -x "$astra" ] || { echo "no ASTRA-sim binary at $astra" >&2; exit 2; }
mkdir -p "$work"
work=$(cd "$work" && pwd)
astra=$(cd "$(dirname "$astra")" && pwd)/$(basename "$astra")

"$commprof" export-chakra "$run" --out "$work/step" >"$work/export.txt"
step=$(sed -n 's/^# commprof export-chakra: step \([0-9]*\) .*/\1/p' "$work/export.txt")
dims=$(awk '/^npus_count:/ { gsub(/[^0-9,]/, ""); print split($0, a, ",") }' "$work/step.network.yml")
[ -n "$dims" ] || { echo "no npus_count in $work/step.network.yml" >&2; exit 1; }
impl=$(printf '"ring", %.0s' $(seq "$dims"))
impl="[ ${impl%, } ]"
cat >"$work/system.json" <<EOF
{
  "scheduling-policy": "LIFO",
  "endpoint-delay": 1,
  "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 1,
  "all-reduce-implementation": $impl,
  "all-gather-implementation": $impl,
  "reduce-scatter-implementation": $impl,
  "all-to-all-implementation": $impl,
  "collective-optimization": "localBWAware",
  "local-mem-bw": 1000,
  "boost-mode": 0
}
EOF
echo '{ "memory-type": "NO_MEMORY_EXPANSION" }' >"$work/memory.json"

start=$(date +%s.%N)
# ASTRA-sim writes its log/ folder into the working directory: the work folder.
(cd "$work" && "$astra" --workload-configuration="$work/step" \
  --comm-group-configuration="$work/step.comm_groups.json" \
  --system-configuration="$work/system.json" \
  --network-configuration="$work/step.network.yml" \
  --remote-memory-configuration="$work/memory.json") >"$work/astra.log" 2>&1 || {
  tail -20 "$work/astra.log" >&2
  echo "ASTRA-sim failed (log: $work/astra.log)" >&2
  exit 1
}
wall=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }')

"$commprof" whatif "$run" --format json >"$work/whatif.json"
"$commprof" whatif "$run" --serialize --format json >"$work/whatif-serial.json"
field() { # FILE SECTION KEY: a number from whatif's JSON
  awk -v sec="\"$2\"" -v key="\"$3\"" '$1 == sec":" { in_sec = 1 } in_sec && $1 == key":" {
    gsub(/,/, "", $2); print $2; exit }' "$1"
}
measured=$(field "$work/whatif.json" measured step_time_ns)
serial=$(field "$work/whatif-serial.json" predicted step_time_ns)

ranks=$(ls "$work"/step.*.et | wc -l)
finished=$(grep -c 'sys\[[0-9]*\] finished' "$work/astra.log" || true)
if [ "$finished" -ne "$ranks" ]; then
  grep -i 'unreleased' "$work/astra.log" | head -20 >&2 || true
  echo "ASTRA-sim finished $finished of $ranks ranks and still exited 0: a stall (log: $work/astra.log)" >&2
  exit 1
fi

echo "# ASTRA-sim over step $step of $run ($dims network dimension(s); ASTRA-sim ran $wall s)"
cat "$work/step.network.yml"
echo "# times in ms; ratio: ASTRA-sim's step (its slowest rank) over commprof's"
awk -v m="$measured" -v s="$serial" '
  /sys\[[0-9]+\] finished, [0-9]+ cycles, exposed communication [0-9]+ cycles/ {
    match($0, /sys\[[0-9]+\]/); r = substr($0, RSTART + 4, RLENGTH - 5)
    # + 0: ticks compare as numbers ("99414000" > "111984000" as text).
    match($0, /finished, [0-9]+/); t = substr($0, RSTART + 10, RLENGTH - 10) + 0
    match($0, /communication [0-9]+/); e = substr($0, RSTART + 14, RLENGTH - 14) + 0
    end[r] = t; exposed[r] = e; if (t > worst) worst = t; n++
  }
  END {
    if (n == 0) { print "no \"sys[N] finished\" line in ASTRA-sim'\''s log"; exit 1 }
    printf " rank  ASTRA-sim step(ms)  ASTRA-sim exposed comm(ms)\n"
    for (r = 0; r < n; ++r) printf " %4d  %18.3f  %26.3f\n", r, end[r] / 1e6, exposed[r] / 1e6
    printf "ASTRA-sim step (slowest rank): %.3f ms\n", worst / 1e6
    printf "commprof measured step: %.3f ms (ASTRA-sim / measured %.3f)\n", m / 1e6, worst / m
    printf "commprof whatif --serialize: %.3f ms (ASTRA-sim / serialised %.3f)\n", s / 1e6, worst / s
  }' "$work/astra.log"
