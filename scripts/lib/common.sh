# shellcheck shell=bash disable=SC2034  # the variables are for the scripts that source this
# SPDX-License-Identifier: MIT
# Helpers for the GPU scripts (scripts/gpu-bench.sh), sourced, not run. Sourcing it changes to the
# repository root and sets:
#   COMMPROF_ROOT  the repository root (this file's ../..)
#   OUT            where results go (default ./gpu-out under the root; a relative OUT given by the
#                  caller is taken from the caller's directory)
#   BUILD          a `cmake --preset cuda` build (default build/cuda; relative as OUT)
#   COMMPROF       $BUILD/commprof
#   NP             ranks of the multi-rank runs (default 2: one per GPU of a 2-GPU host)
#   LOG            the log file, $OUT/gpu-bench.log (appended to, one header per call)
#   MPIRUN_BASE    mpirun with what every rank needs, without -np:
#                  mpirun [--allow-run-as-root] -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=WARN
#                  [-x LD_LIBRARY_PATH, where set]
#                  (--allow-run-as-root only when running as root; NVLink multicast stays off)
#   MPIRUN         MPIRUN_BASE -np $NP
# and defines say, log_start, host_header, now_ms, run_to, run_expect (below).

_caller_dir=$PWD
COMMPROF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$COMMPROF_ROOT" || exit 1

# abs_path PATH: PATH made absolute against the caller's directory (not the root).
abs_path() {
  case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s\n' "$_caller_dir/$1" ;;
  esac
}

if [ -n "${OUT:-}" ]; then OUT=$(abs_path "$OUT"); else OUT=$COMMPROF_ROOT/gpu-out; fi
if [ -n "${BUILD:-}" ]; then BUILD=$(abs_path "$BUILD"); else BUILD=$COMMPROF_ROOT/build/cuda; fi
COMMPROF=$BUILD/commprof
NP=${NP:-2}
LOG=$OUT/gpu-bench.log

# commprof's fused attention opens libcudnn.so.9 (cuDNN 9); on a host whose only cuDNN is the one
# in PyTorch's wheels (site-packages/nvidia/cudnn/lib), that directory goes onto the library path.
if ! ldconfig -p 2>/dev/null | grep -q 'libcudnn\.so\.9 '; then
  _cudnn_dir=$(${PYTHON:-python3} -c 'import os, nvidia.cudnn as c; print(os.path.join(list(c.__path__)[0], "lib"))' 2>/dev/null)
  if [ -n "$_cudnn_dir" ] && [ -e "$_cudnn_dir/libcudnn.so.9" ]; then
    export LD_LIBRARY_PATH=$_cudnn_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
fi

MPIRUN_BASE=(mpirun)
[ "$(id -u)" = 0 ] && MPIRUN_BASE+=(--allow-run-as-root)
MPIRUN_BASE+=(-x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=WARN)
# A library path set for this call (a carried NCCL or simdjson) reaches every rank, on every host.
[ -n "${LD_LIBRARY_PATH:-}" ] && MPIRUN_BASE+=(-x LD_LIBRARY_PATH)
MPIRUN=("${MPIRUN_BASE[@]}" -np "$NP")

# say TEXT...: one timestamped (UTC) line on stdout and in the log.
say() {
  local line
  line="$(date -u +%T) $*"
  printf '%s\n' "$line"
  [ -d "${LOG%/*}" ] && printf '%s\n' "$line" >>"$LOG"
  return 0
}

# now_ms: milliseconds since the epoch, for wall times of single commands.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# log_start: creates $OUT and the log, then writes the host header.
log_start() {
  mkdir -p "$OUT" || exit 1
  : >>"$LOG"
  host_header
}

# host_header: date (UTC), host name, commit, ranks, the GPUs and their topology. The commit is
# $COMMIT where set (a copy of the tree without .git), else the checkout's HEAD (+ "-dirty").
host_header() {
  local commit=${COMMIT:-}
  if [ -z "$commit" ]; then
    commit=$(git -C "$COMMPROF_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [ "$commit" != unknown ] && [ -n "$(git -C "$COMMPROF_ROOT" status --porcelain -uno 2>/dev/null)" ]; then
      commit+="-dirty"
    fi
  fi
  say "$(date -u +%FT%TZ) host $(hostname), commit $commit, NP=$NP, build $BUILD, out $OUT"
  {
    if command -v nvidia-smi >/dev/null; then
      nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
      nvidia-smi topo -m
    else
      echo "nvidia-smi not found: no NVIDIA driver on this host"
    fi
  } >>"$LOG" 2>&1
}

# run_expect RC LABEL OUTFILE CMD...: runs CMD with stdout and stderr into OUTFILE, logs LABEL
# with the exit status and the wall time. Returns 0 when CMD exited with RC, else 1 and sets
# PHASE_RC=1 (the phase failed; the caller goes on).
PHASE_RC=0
run_expect() {
  local want=$1 label=$2 file=$3 rc t0
  shift 3
  t0=$(now_ms)
  "$@" >"$file" 2>&1
  rc=$?
  if [ "$rc" -eq "$want" ]; then
    say "$label: rc=$rc ($(( $(now_ms) - t0 )) ms)"
    return 0
  fi
  say "$label: FAILED rc=$rc (expected $want), output in ${file#"$OUT"/}"
  PHASE_RC=1
  return 1
}

# run_to LABEL OUTFILE CMD...: run_expect with exit status 0 expected.
run_to() { run_expect 0 "$@"; }
