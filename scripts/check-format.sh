#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fails when a tracked C++ or CUDA file differs from what clang-format 14 (Debian 12's, the
# version .clang-format was written for) makes of it; prints each file that does. Run from
# anywhere in the checkout; CI runs it (.ci/run). `clang-format -i FILE` fixes a file. Another
# clang-format version formats some constructs differently, so a missing clang-format 14 is an
# error here (scripts/install-deps.sh --lint installs it), not a pass.
set -euo pipefail
cd "$(dirname "$0")/.."
tool=""
for candidate in clang-format-14 clang-format; do
  if command -v "$candidate" >/dev/null && "$candidate" --version | grep -q 'version 14\.'; then
    tool=$candidate
    break
  fi
done
if [ -z "$tool" ]; then
  echo "check-format: clang-format 14 not found (scripts/install-deps.sh --lint)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.h')
if ! "$tool" --dry-run -Werror "${files[@]}" 2>/tmp/check-format.$$; then
  grep -o '^[^:]*:[0-9]*:[0-9]*: error' /tmp/check-format.$$ | cut -d: -f1 | sort -u |
    sed 's/^/check-format: not formatted: /' >&2
  rm -f /tmp/check-format.$$
  exit 1
fi
rm -f /tmp/check-format.$$
echo "check-format: ${#files[@]} files formatted as clang-format 14 formats them"
