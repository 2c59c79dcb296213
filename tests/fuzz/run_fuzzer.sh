#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one libFuzzer target for CTest: a working corpus in the build tree (new inputs land there,
# never in the checked-in seeds), the seeds read from the source tree, crash inputs kept in
# artifacts/. Exits with the fuzzer's status: 0 when the time ran out without a finding.
# Usage: run_fuzzer.sh BUILD_DIR FUZZER SEED_DIR [libFuzzer options...]
set -u
build=$1; fuzzer=$2; seeds=$3; shift 3
name=$(basename "$fuzzer")
mkdir -p "$build/corpus/$name" "$build/artifacts" || exit 99
rm -f "$build/artifacts/$name"-*  # only this run's findings are reported below
"$fuzzer" -artifact_prefix="$build/artifacts/$name-" "$@" "$build/corpus/$name" "$seeds"
status=$?
if [ $status -ne 0 ]; then
  echo "run_fuzzer.sh: $name failed (exit $status). The input is in $build/artifacts/$name-*;"
  echo "reproduce with: $fuzzer $build/artifacts/$name-<file>, then fix and add it as a unit test."
  for f in "$build/artifacts/$name"-*; do
    [ -f "$f" ] && { echo "--- $f (base64):"; base64 "$f" | head -c 4000; echo; }
  done
fi
exit $status
