#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The reducer at scale (issues #31, #32): synthetic rank files of RANKS ranks x OPS ops, written
# in parallel (one writer per core), then `commprof report DIR --format json` under mpirun with
# each process count of NPS, timed (wall) with every process's peak memory and CPU time (GNU
# time), and the reports compared byte for byte (cmp). CPU only.
#
#   scripts/reduce-bench.sh RANKS OPS FORMAT "NPS" [WORK_DIR]
#   e.g. BUILD=build/host scripts/reduce-bench.sh 16384 20000 zstd "16" /tmp/rb
#
# COMMAND: report (the default) or diagnose (issue #47: the time to a verdict, the same files
# read by `commprof diagnose DIR --format json`; synthetic files hold a job whose collectives all
# completed, so every file is read to its end before "no problem" is said: the longest case).
# REUSE=1 reads the files an earlier KEEP=1 run left in WORK_DIR (when it holds RANKS of them)
# instead of writing them again: two builds, or the report with and without its critical path,
# compared over the same files in one sitting.
# FORMAT: json or zstd (--rank-file-format). REPORT_ARGS: more arguments for report; by default
# none, so the report has its critical path (its steps packed as the reduction reads each file,
# each step's graph built by one process); REPORT_ARGS=--no-critical-path leaves it out. The
# files are removed at the end unless KEEP=1. Prints one line per run: ranks, ops, format, bytes on disk, processes, wall s,
# the smallest and largest peak RSS and CPU time (user + system) of a process.
set -euo pipefail
[ $# -ge 4 ] || { sed -n '3,15p' "$0" >&2; exit 2; }
ranks=$1 ops=$2 format=$3 nps=$4
command=${COMMAND:-report}
case $command in report | diagnose) ;; *) echo "COMMAND: report or diagnose, not '$command'" >&2; exit 2 ;; esac
work=${5:-/tmp/commprof-reduce-bench}
build=${BUILD:-build/host}
gen=$build/analysis/tools/commprof_make_synthetic_ranks
commprof=$build/commprof
if [ ! -x "$gen" ] || [ ! -x "$commprof" ]; then
  echo "no $gen or $commprof (set BUILD)" >&2
  exit 2
fi
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)" >&2; exit 2; }
cores=$(nproc)
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { print a - b }'; }
dir=$work/$ranks-$ops-$format
if [ "${REUSE:-0}" = 1 ] && [ -d "$dir" ] && [ "$(find "$dir" -type f | wc -l)" = "$ranks" ]; then
  bytes=$(du -sb "$dir" | cut -f1)
  printf 'read again the %d files of %d ops (%s, %d bytes) in %s\n' "$ranks" "$ops" "$format" \
    "$bytes" "$dir"
else
  rm -rf "$dir"
  mkdir -p "$dir"
  start=$(date +%s.%N)
  per=$(((ranks + cores - 1) / cores))
  for ((first = 0; first < ranks; first += per)); do
    count=$((first + per > ranks ? ranks - first : per))
    "$gen" "$dir" "$ranks" "$ops" 10 8 "$format" "$first" "$count" >/dev/null &
  done
  wait
  bytes=$(du -sb "$dir" | cut -f1)
  printf 'wrote %d files of %d ops (%s, %d bytes) in %.1f s with %d writers\n' "$ranks" "$ops" \
    "$format" "$bytes" "$(since "$start")" "$cores"
fi

mpirun=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
for np in $nps; do
  sync
  rm -f "$work"/rss.*
  start=$(date +%s.%N)
  # Each process's own peak RSS and CPU time, in a file named by its MPI rank (expanded by the
  # inner shell).
  # shellcheck disable=SC2086,SC2016  # REPORT_ARGS is a list of arguments
  rc=0
  "${mpirun[@]}" -np "$np" sh -c '/usr/bin/time -f "%M %U %S" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' \
    "$work/rss" "$commprof" "$command" "$dir" --format json -o "$work/report-$np.json" \
    ${REPORT_ARGS-} || rc=$?
  # diagnose exits 4 when it finds a problem: a verdict, not a failure.
  [ "$rc" = 0 ] || { [ "$command" = diagnose ] && [ "$rc" = 4 ]; } ||
    { echo "$command failed with exit $rc" >&2; exit 1; }
  wall=$(since "$start")
  max=$(cut -d' ' -f1 "$work"/rss.* | sort -n | tail -n 1)
  min=$(cut -d' ' -f1 "$work"/rss.* | sort -n | head -n 1)
  cpu=$(awk '{ print $2 + $3 }' "$work"/rss.* | sort -n | sed -n '1p;$p' | tr '\n' ' ')
  printf '%s: ranks %d  ops %d  %s %d B  processes %d  wall %.1f s  peak RSS per process %d..%d MiB' \
    "$command" "$ranks" "$ops" "$format" "$bytes" "$np" "$wall" $((min / 1024)) $((max / 1024))
  # shellcheck disable=SC2086  # the smallest and the largest
  printf '  CPU per process %.1f..%.1f s\n' $cpu
done
for np in $nps; do
  cmp -s "$work/report-${nps%% *}.json" "$work/report-$np.json" ||
    echo "report with $np processes differs from ${nps%% *}'s" >&2
done
[ "${KEEP:-0}" = 1 ] || rm -rf "$dir"
