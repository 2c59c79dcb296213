#!/usr/bin/env bash
# Installs what commprof needs to build and test on Debian 12 (and Ubuntu 22.04+), from the
# distribution's packages only. Safe to re-run: does nothing when everything is installed.
# The CUDA backend additionally needs a CUDA toolkit with NCCL (e.g. /usr/local/cuda); it is
# detected at configure time and not installed here.
#
#   scripts/install-deps.sh           build and test dependencies
#   scripts/install-deps.sh --tests   also a headless browser for the HTML report's render test and
#                                     Prometheus' promtool, which lints the prometheus export
#   scripts/install-deps.sh --slurm   also Slurm's daemons, client and munge, for the test that
#                                     runs slurm/ on a real one-node cluster (ctest -L slurm; CI).
#                                     Debian starts no daemon under policy-rc.d or without systemd;
#                                     the test starts its own with its own config.
#   scripts/install-deps.sh --ccache  also ccache, through which CI's CUDA stage reuses the host
#                                     stage's objects
#   scripts/install-deps.sh --lint    also clang-format (14 on Debian 12), for scripts/check-format.sh
#   scripts/install-deps.sh --fuzz    also clang with libFuzzer and the sanitizer runtimes
#                                     (libclang-rt-dev) and llvm-symbolizer (llvm), for the fuzz
#                                     preset. The asan and tsan presets need nothing more: g++
#                                     brings libasan, libubsan and libtsan.
set -euo pipefail

packages=(
  cmake ninja-build g++ make        # build (CMake >= 3.25)
  openmpi-bin libopenmpi-dev        # ranks: mpirun and the MPI C API
  libboost-program-options-dev      # command line (static archive included)
  nlohmann-json3-dev                # JSON result files
  libsimdjson-dev                   # fast rank-file reader (commprof report), import-torch
  zlib1g-dev                        # import-torch: gzip-compressed PyTorch profiler traces
  libzstd-dev                       # compressed rank files (--rank-file-format zstd)
  libsqlite3-dev                    # nsys SQLite exports (commprof import-nsys)
  libgtest-dev                      # tests
  protobuf-compiler libprotobuf-dev # tests: export-chakra's files decoded with Chakra's schema
  python3                           # tests: scripts/check-function-length.py
)
# --tests: also what the test suite needs beyond building (a headless browser for the HTML
# report's render test, promtool from the prometheus package for the export's lint; both tests
# skip themselves without them).
# --slurm: Slurm's daemons, client and munge for `ctest -L slurm`; slurm-wlm-basic-plugins (pulled
# in by slurmd) carries mpi/pmix, which Open MPI 4.1 needs for srun direct launch.
for arg in "$@"; do
  case "$arg" in
    --tests) packages+=(chromium prometheus) ;;
    --slurm) packages+=(slurmctld slurmd slurm-client munge) ;;
    --fuzz) packages+=(clang libclang-rt-dev llvm) ;;
    --lint) packages+=(clang-format) ;;
    --ccache) packages+=(ccache) ;;
    *) echo "usage: $0 [--tests] [--slurm] [--lint] [--fuzz] [--ccache]" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
