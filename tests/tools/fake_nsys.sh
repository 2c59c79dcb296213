#!/bin/sh
# SPDX-License-Identifier: MIT
# A stand-in for `nsys profile` in tests, where no Nsight Systems is installed: it records what
# it was asked to do where the report would go, then runs the program as nsys would.
#   nsys profile [--option=value]... PROGRAM [ARGS...]
# writes, with --output's %h expanded to the host name (`uname -n`) as nsys does:
#   <output>.args       every argument after `profile`, one per line
#   <output>.env        the environment variables that decide the capture and the rank
#   <output>.nsys-rep   a placeholder report
# then execs PROGRAM: the first argument that does not start with '-' (nsys-profile-rank.sh
# passes every option as --name=value). Exit 90 on a call real nsys would reject here.
set -eu
[ "${1:-}" = profile ] || { echo "fake nsys: expected 'profile', got '${1:-}'" >&2; exit 90; }
shift
args=$(printf '%s\n' "$@")
out=
while [ $# -gt 0 ]; do
  case $1 in
    --output=*) out=${1#--output=} ;;
    -*) ;;
    *) break ;;
  esac
  shift
done
[ -n "$out" ] || { echo "fake nsys: no --output" >&2; exit 90; }
[ $# -gt 0 ] || { echo "fake nsys: no program" >&2; exit 90; }
host=$(uname -n)
out=$(printf '%s' "$out" | sed "s|%h|$host|g")
mkdir -p "$(dirname "$out")"
printf '%s\n' "$args" >"$out.args"
env | grep -E '^(NSYS_NVTX_PROFILER_REGISTER_ONLY|OMPI_COMM_WORLD_RANK|PMIX_RANK|PMI_RANK|SLURM_PROCID)=' \
  | sort >"$out.env" || true
echo "fake nsys report" >"$out.nsys-rep"
exec "$@"
