#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks the plugin's own declaration of NCCL's profiler ABI (src/nccl_profiler/nccl_profiler_abi.hpp)
# against the headers of an NCCL source tree:
#
#   scripts/check-nccl-profiler-abi.sh NCCL_SRC_DIR
#
# NCCL_SRC_DIR: a checkout of github.com/NVIDIA/nccl, 2.27 or later (profiler version 4; version 5
# from 2.28), e.g. `git clone --depth 1 --branch v2.28.3-1 https://github.com/NVIDIA/nccl`. NCCL's
# headers are never part of this repository: the tree is given by path.
#
# Compiles scripts/check-nccl-profiler-abi.cpp (syntax only, ${CXX:-c++}) with NCCL's
# src/include/plugin/nccl_profiler.h (the headers libnccl itself is built with) and commprof's
# declarations in one translation unit: every field's offset, size and kind, every struct's size
# and alignment, the tables' function signatures and the event-type and state values must agree.
# Exit 0: they agree (the versions checked are printed); 1: they differ (the compiler names the
# field) or the tree lacks what is needed; 2: usage.
set -euo pipefail

if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -eq 1 ] && exit 0
  exit 2
fi
nccl=$(cd "$1" && pwd) || { echo "check-nccl-profiler-abi: no directory $1" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)

fail() { echo "check-nccl-profiler-abi: $*" >&2; exit 1; }

profiler=$nccl/src/include/plugin/profiler
if [ ! -f "$nccl/src/include/plugin/nccl_profiler.h" ] || [ ! -f "$profiler/profiler_v4.h" ]; then
  fail "$nccl is no NCCL source tree of 2.27 or later (no src/include/plugin/profiler/profiler_v4.h)"
fi
# ncclResult_t and the logger type come from NCCL's headers for plugins, beside its example
# profiler: ext-profiler/ until 2.28, plugins/profiler/ from 2.29.
example=
for d in "$nccl/plugins/profiler/example" "$nccl/ext-profiler/example"; do
  if [ -f "$d/nccl/err.h" ] && [ -f "$d/nccl/common.h" ]; then example=$d; break; fi
done
[ -n "$example" ] || fail "$nccl has no example profiler's nccl/err.h and nccl/common.h"

version=unknown
if [ -f "$nccl/makefiles/version.mk" ]; then
  version=$(awk '/^NCCL_(MAJOR|MINOR|PATCH)/ {v = v (v ? "." : "") $3} END {print v}' \
    "$nccl/makefiles/version.mk")
fi
v5=0
checked="v4"
if [ -f "$profiler/profiler_v5.h" ]; then v5=1; checked="v4 and v5"; fi

"${CXX:-c++}" -std=c++17 -fsyntax-only -Wall -Wextra -Werror -DCOMMPROF_CHECK_V5=$v5 \
  -I"$example" -I"$nccl/src/include" -I"$root" "$root/scripts/check-nccl-profiler-abi.cpp" ||
  fail "NCCL $version: the declarations differ from NCCL's (the compiler's message names the field)"
echo "check-nccl-profiler-abi: NCCL $version ($nccl): src/nccl_profiler/nccl_profiler_abi.hpp" \
  "matches profiler $checked (offsets, sizes, kinds, signatures, values)"
