#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs one MPI rank under Nsight Systems: one report per rank, named by host and rank, that by
# default holds only commprof's measured steps (warm-up, NCCL setup and the final report left out).
# Put it between the launcher and the program, so every rank gets its own nsys:
#
#   mpirun -np 2 scripts/nsys-profile-rank.sh --out nsys -- build/cuda/commprof run --workload dp
#   srun --mpi=pmix scripts/nsys-profile-rank.sh --out nsys -- build/cuda/commprof run ...
#   ... nsys-profile-rank.sh --out nsys -- --force-overwrite=true -- build/cuda/commprof run ...
#
# It runs, for rank R on host H:
#   nsys profile --trace=cuda,nvtx,osrt --output=DIR/commprof_%h_R \
#     --capture-range=nvtx --nvtx-capture=measured_steps@commprof --capture-range-end=stop \
#     [extra nsys arguments] COMMAND...
# nsys expands %h to the host name, so the report is DIR/commprof_H_R.nsys-rep; that name is
# also what `commprof import-nsys` falls back on for host and rank. The capture starts when
# commprof opens its NVTX range "measured_steps" (domain commprof) before the first measured
# step and stops when it closes after the last; `stop` (not nsys' default stop-shutdown) lets
# commprof run on and write its rank files and report. Only `commprof run` opens that range:
# for commprof bench and gemm, other programs and builds without NVTX (the host backend's)
# nothing would be captured, so use --capture all for those.
#
# Options (before the first --):
#   --out DIR        where the reports go (default: nsys); created if missing
#   --nsys PATH      the nsys binary (default: $NSYS, else nsys on PATH)
#   --trace LIST     what nsys traces (default: cuda,nvtx,osrt: kernels and copies, commprof's
#                    NVTX ranges, and the OS calls that show where a rank waits)
#   --capture WHAT   measured (default): only the measured steps; all: the whole process
#   --print          print the nsys command line instead of running it
#   -h, --help       this text
# After the first --: extra nsys arguments, if the next word starts with '-', up to a second --;
# then the program and its arguments.
#
# The rank is the first of OMPI_COMM_WORLD_RANK (mpirun), PMIX_RANK, PMI_RANK, SLURM_PROCID
# (srun) that is set: commprof's own order. SLURM_PROCID comes last because inside a batch job
# every process a non-Slurm launcher starts inherits the batch step's SLURM_PROCID=0.
#
# Exit status: nsys' (which is the program's), or 2 when this script cannot start it (no rank in
# the environment, nsys not found, bad option); the message names what is missing.
set -euo pipefail

me="nsys-profile-rank.sh"
usage() { sed -n '3,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() {
  echo "$me: error: $*" >&2
  exit 2
}

out=nsys
nsys=${NSYS:-}
trace=cuda,nvtx,osrt
capture=measured
print=0
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || die "--out needs a directory"; out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --nsys) [ $# -ge 2 ] || die "--nsys needs a path"; nsys=$2; shift 2 ;;
    --nsys=*) nsys=${1#--nsys=}; shift ;;
    --trace) [ $# -ge 2 ] || die "--trace needs a list"; trace=$2; shift 2 ;;
    --trace=*) trace=${1#--trace=}; shift ;;
    --capture) [ $# -ge 2 ] || die "--capture needs measured or all"; capture=$2; shift 2 ;;
    --capture=*) capture=${1#--capture=}; shift ;;
    --print) print=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option '$1' (the program comes after --; see --help)" ;;
  esac
done
case $capture in
  measured | all) ;;
  *) die "--capture must be 'measured' or 'all', not '$capture'" ;;
esac
[ -n "$out" ] || die "--out must not be empty"

extra=()
if [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; then
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    extra+=("$1")
    shift
  done
  [ $# -gt 0 ] || die "extra nsys arguments (${extra[*]}) must end with -- before the program"
  shift
fi
[ $# -gt 0 ] || die "no program to profile: $me [options] -- PROGRAM [ARGS...] (see --help)"

rank=
rank_var=
for var in OMPI_COMM_WORLD_RANK PMIX_RANK PMI_RANK SLURM_PROCID; do
  value=${!var:-}
  [ -n "$value" ] || continue
  case $value in
    *[!0-9]*) die "$var='$value' is not a rank number" ;;
  esac
  rank=$value
  rank_var=$var
  break
done
[ -n "$rank" ] || die "no rank in the environment: none of OMPI_COMM_WORLD_RANK (mpirun), \
PMIX_RANK, PMI_RANK or SLURM_PROCID (srun) is set. Start this script under the launcher, once \
per rank: mpirun -np N $me ... -- PROGRAM"

if [ -z "$nsys" ]; then
  nsys=$(command -v nsys || true)
  [ -n "$nsys" ] || die "nsys not found: not on PATH and neither --nsys nor NSYS given \
(e.g. --nsys /opt/nvidia/nsight-systems/<version>/bin/nsys, or module load nsight-systems)"
elif [ "${nsys#*/}" = "$nsys" ]; then
  resolved=$(command -v "$nsys" || true)
  [ -n "$resolved" ] || die "nsys not found: '$nsys' is not on PATH (--nsys or NSYS)"
  nsys=$resolved
fi
if [ ! -f "$nsys" ] || [ ! -x "$nsys" ]; then
  die "nsys not found: '$nsys' is not an executable file (--nsys or NSYS)"
fi

# %h is left to nsys (its host name); the rank is filled in here, from whichever variable had it.
cmd=("$nsys" profile "--trace=$trace" "--output=$out/commprof_%h_$rank")
if [ "$capture" = measured ]; then
  cmd+=(--capture-range=nvtx --nvtx-capture=measured_steps@commprof --capture-range-end=stop)
  # commprof registers the range's name, which nsys matches by default; this makes nsys also
  # match a plain-string range of that name (a build that does not register it).
  export NSYS_NVTX_PROFILER_REGISTER_ONLY=0
fi
cmd+=("${extra[@]}" "$@")

if [ "$print" = 1 ]; then
  # Shell-quoted only where needed, so the line reads as one would type it.
  line=
  for word in "${cmd[@]}"; do
    case $word in
      '' | *[!A-Za-z0-9_@%+=:,./{}-]*) word=$(printf '%q' "$word") ;;
    esac
    line+="${line:+ }$word"
  done
  printf '%s\n' "$line"
  exit 0
fi
mkdir -p "$out" || die "cannot create --out directory '$out'"
if [ "$rank" = 0 ]; then
  what="the measured steps"
  [ "$capture" = all ] && what="the whole process"
  echo "$me: rank 0 ($rank_var) -> $out/commprof_<host>_0.nsys-rep; capturing $what" >&2
fi
exec "${cmd[@]}"
