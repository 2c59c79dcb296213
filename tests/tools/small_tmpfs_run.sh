#!/bin/sh
# SPDX-License-Identifier: MIT
# A disk that fills up, for real: mounts a tmpfs of SIZE (e.g. 100k) on MOUNTPOINT in a private
# user and mount namespace (no privileges needed where the kernel allows user namespaces; as root
# where it does not, a mount namespace alone), runs the command, then `commprof report` over OUT
# (inside that tmpfs) and lists what OUT holds: the tmpfs disappears with the namespace. Exits 77
# (CTest: skipped) where no namespace can be made, or 1 there when COMMPROF_REQUIRE_USERNS=1 (a
# host that must run the test: a skip fails it).
# SIZE may be after:K:DIR instead: room for K steps of every rank file in DIR (those of the same
# job run without a limit) and not for one more of each (rank_file_step_bytes.sh, in pages).
# Usage: small_tmpfs_run.sh SIZE MOUNTPOINT OUT COMMPROF command [args...]
set -u
size=$1; mnt=$2; out=$3; bin=$4; shift 4
case $size in
  after:*)
    k=${size#after:}; dir=${k#*:}; k=${k%%:*}
    size=$(sh "$(dirname "$0")/rank_file_step_bytes.sh" "$k" 4096 "$dir"/rank-*.json) || exit 1
    echo "small_tmpfs_run.sh: a tmpfs of $size bytes: $k step(s) of each of $dir's rank files"
    ;;
esac
# The namespace flags that let a tmpfs be mounted: a user namespace mapping us to root (-r), or,
# for root in a container that forbids user namespaces (some CI runners), a mount namespace only.
flags=
for f in -rm -m; do
  [ "$f" = -m ] && [ "$(id -u)" != 0 ] && continue
  if unshare "$f" sh -c "mount -t tmpfs -o size=$size commprof-probe /mnt" 2>/dev/null; then
    flags=$f
    break
  fi
done
if [ -z "$flags" ]; then
  if [ "${COMMPROF_REQUIRE_USERNS:-0}" = 1 ]; then
    echo "small_tmpfs_run.sh: COMMPROF_REQUIRE_USERNS=1, but this system allows no unprivileged" \
      "user namespace with a tmpfs (nor a mount namespace as root): failed"
    exit 1
  fi
  echo "small_tmpfs_run.sh: skipped: this system allows no unprivileged user namespace with a tmpfs"
  exit 77
fi
echo "small_tmpfs_run.sh: namespace: unshare $flags"
mkdir -p "$mnt" || exit 99
# Inside: $0 is commprof, $1..$3 the mount point, its size and the output directory.
exec unshare "$flags" sh -c '
  bin=$0; mnt=$1; size=$2; out=$3; shift 3
  mount -t tmpfs -o size="$size" commprof-test "$mnt" || exit 99
  "$@"
  echo "run exit code $?"
  "$bin" report "$out"
  echo "report exit code $?"
  ls -a "$out"' "$bin" "$mnt" "$size" "$out" "$@"
