#!/usr/bin/env bash
# On the GPU machine, sourced: put a build carried in .carry/build-cuda where its CTest files
# expect it (they hold the absolute paths of the checkout it was configured in, /work/main).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src=${COMMPROF_CONFIGURED_ROOT:-/work/main}
if [ "$here" != "$src" ]; then mkdir -p "$(dirname "$src")" && ln -sfn "$here" "$src"; fi
mkdir -p "$here/build" && ln -sfn "$here/.carry/build-cuda" "$here/build/cuda"
export NCCL_NVLS_ENABLE=0
