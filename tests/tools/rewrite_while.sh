#!/bin/sh
# SPDX-License-Identifier: MIT
# rewrite_while.sh DIR -- COMMAND...: runs COMMAND while a loop rewrites DIR's rank files'
# times (touch, ten times a second), as a running job's NCCL profiler plugin rewrites its files
# at every flush; exits with COMMAND's status.
dir=$1
shift 2
(while :; do touch "$dir"/rank-*.json; sleep 0.1; done) &
toucher=$!
"$@"
rc=$?
kill "$toucher"
exit "$rc"
