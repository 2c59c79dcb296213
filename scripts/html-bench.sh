#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The HTML report at scale (issue #32): for each rank count of RANKS, a synthetic run of OPS ops
# per rank (written in parallel, one writer per core), `commprof report DIR --format html`, and
# the page's size and draw time in headless Chromium: navigation start to the first frame after
# the page's own "commprof-drawn" mark (set once every chart, canvas and table is drawn and the
# page laid out), read over the DevTools protocol by scripts/lib/html-draw-time.mjs. CPU only.
#
#   BUILD=build/host RANKS="1024 4096 16384" OPS=300 scripts/html-bench.sh [WORK_DIR]
#
# Needs chromium and node (>= 20). REPORT_ARGS: more arguments for report. The rank files are
# removed at the end unless KEEP=1; the pages stay in WORK_DIR. Prints one line per rank count:
# ranks, the page's bytes, the report's wall time, the draw time (and the mark's, and the load
# event's, all from navigation start).
set -euo pipefail
work=${1:-/tmp/commprof-html-bench}
build=${BUILD:-build/host}
ranks_list=${RANKS:-1024 4096 16384}
ops=${OPS:-300}
gen=$build/analysis/tools/commprof_make_synthetic_ranks
commprof=$build/commprof
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$gen" ] || [ ! -x "$commprof" ]; then
  echo "no $gen or $commprof (set BUILD)" >&2
  exit 2
fi
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "needs chromium (scripts/install-deps.sh --tests)" >&2; exit 2; }
command -v node >/dev/null || { echo "needs node (>= 20)" >&2; exit 2; }
cores=$(nproc)
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { print a - b }'; }
mkdir -p "$work"

for ranks in $ranks_list; do
  dir=$work/$ranks-$ops
  if [ ! -f "$dir/rank-$((ranks - 1)).json" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    per=$(((ranks + cores - 1) / cores))
    for ((first = 0; first < ranks; first += per)); do
      count=$((first + per > ranks ? ranks - first : per))
      "$gen" "$dir" "$ranks" "$ops" 10 8 json "$first" "$count" >/dev/null &
    done
    wait
  fi
  page=$work/report-$ranks.html
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # REPORT_ARGS is a list of arguments
  "$commprof" report "$dir" --format html -o "$page" ${REPORT_ARGS:-}
  wall=$(since "$start")
  bytes=$(wc -c <"$page")
  times=$(node --experimental-websocket --no-warnings "$here/lib/html-draw-time.mjs" "$browser" "$page")
  printf 'ranks %d  ops %d  html %d B (%.1f MB)  report %.1f s  %s\n' "$ranks" "$ops" "$bytes" \
    "$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" "$wall" "$times"
  [ "${KEEP:-0}" = 1 ] || rm -rf "$dir"
done
