#!/usr/bin/env bash
# mpirun for one machine, as anyone: Open MPI refuses to run as root unless told, and refuses to
# start more ranks than cores unless --oversubscribe is given (a 4-rank run on a 2-core laptop or
# CI box). Usage: scripts/mpirun-local.sh -np 4 build/host/commprof bench ...
set -euo pipefail
extra=()
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  extra+=(--oversubscribe)
  if [ "$(id -u)" -eq 0 ]; then extra+=(--allow-run-as-root); fi
fi
exec mpirun "${extra[@]}" "$@"
