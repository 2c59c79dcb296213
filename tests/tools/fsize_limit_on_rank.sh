#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a command with a file-size limit (RLIMIT_FSIZE, what `ulimit -f` sets; here in bytes,
# through util-linux's prlimit) on one MPI rank only (by OMPI_COMM_WORLD_RANK, PMIX_RANK or
# SLURM_PROCID): one node whose disk quota runs out, for tests. Root is bound by it too.
# Usage: fsize_limit_on_rank.sh RANK BYTES command [args...]
rank=$1; bytes=$2; shift 2
me=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${SLURM_PROCID:-0}}}
if [ "$me" = "$rank" ]; then exec prlimit --fsize="$bytes" -- "$@"; fi
exec "$@"
