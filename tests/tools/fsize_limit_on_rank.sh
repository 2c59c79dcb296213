#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a command with a file-size limit (RLIMIT_FSIZE, what `ulimit -f` sets; here in bytes,
# through util-linux's prlimit) on one MPI rank only (by OMPI_COMM_WORLD_RANK, PMIX_RANK or
# SLURM_PROCID): one node whose disk quota runs out, for tests. Root is bound by it too.
# BYTES may be after:K:FILE instead: the limit that lets K steps of FILE (that rank's file of the
# same job run without a limit) through and stops the next (rank_file_step_bytes.sh).
# Usage: fsize_limit_on_rank.sh RANK BYTES command [args...]
rank=$1; bytes=$2; shift 2
me=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${SLURM_PROCID:-0}}}
if [ "$me" = "$rank" ]; then
  case $bytes in
    after:*)
      k=${bytes#after:}; file=${k#*:}; k=${k%%:*}
      bytes=$(sh "$(dirname "$0")/rank_file_step_bytes.sh" "$k" 1 "$file") || exit 1
      ;;
  esac
  exec prlimit --fsize="$bytes" -- "$@"
fi
exec "$@"
