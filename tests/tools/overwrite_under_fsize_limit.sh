#!/bin/sh
# SPDX-License-Identifier: MIT
# An earlier result survives a failed overwrite: runs the command once (it writes FILE), then
# again under a file-size limit of BYTES (RLIMIT_FSIZE, as `ulimit -f` sets it), which must fail
# naming FILE ("File too large"), leave FILE byte for byte as it was, and leave no temporary file.
# Usage: overwrite_under_fsize_limit.sh FILE BYTES command [args...]
set -u
file=$1; bytes=$2; shift 2
rm -f "$file" "$file".tmp.* "$file.before"
"$@" || { echo "FAIL: the first write failed"; exit 1; }
cp "$file" "$file.before" || exit 99
# The limit binds Open MPI too: PMIx's shared-memory store and the shared-memory transport are
# files it would stop, so this one process uses neither.
PMIX_MCA_gds=hash OMPI_MCA_btl=self prlimit --fsize="$bytes" -- "$@" >"$file.log" 2>&1
rc=$?
cat "$file.log"
echo "under the limit: exit code $rc"
failed=0
[ $rc -eq 1 ] || { echo "FAIL: expected exit code 1"; failed=1; }
grep -q "error: cannot write '$file': File too large" "$file.log" ||
  { echo "FAIL: no error naming $file and EFBIG"; failed=1; }
cmp "$file" "$file.before" || { echo "FAIL: the earlier $file changed"; failed=1; }
if ls "$file".tmp.* 2>/dev/null; then echo "FAIL: a temporary file is left"; failed=1; fi
[ $failed -eq 0 ] && echo "ok: the earlier report is unchanged and no temporary file is left"
exit $failed
