#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a command with VAR=VALUE set on one MPI rank only (by OMPI_COMM_WORLD_RANK, PMIX_RANK or
# SLURM_PROCID): an environment that differs between nodes, for tests.
# Usage: env_on_rank.sh RANK VAR=VALUE command [args...]
rank=$1; assignment=$2; shift 2
me=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${SLURM_PROCID:-0}}}
if [ "$me" = "$rank" ]; then export "${assignment?}"; fi
exec "$@"
