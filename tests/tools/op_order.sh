#!/bin/sh
# SPDX-License-Identifier: MIT
# Prints on one line the names of the first N ops of a rank file whose names match an extended
# regular expression, in the file's order: a run records each stream's ops in submission order
# (tests/tools/rank_files_check.cpp checks that), so this is the order the rank issued them in.
# Usage: op_order.sh RANK_FILE ERE N
set -eu
grep -oE "\"name\":\"$2\"" "$1" | head -n "$3" | sed 's/^"name":"//; s/"$//' | tr '\n' ' '
echo
