#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a command that must not be able to write into DIR: creates DIR without write permission
# (mode 0555), then runs the command as a user the permission bits bind. Root bypasses them
# (CI runs as root), so as root the command runs as `nobody` (util-linux's setpriv); any other
# user is bound by them already. Usage: read_only_dir_run.sh DIR command [args...]
set -u
dir=$1; shift
rm -rf "$dir" && mkdir -p "$dir" && chmod 0555 "$dir" || exit 99
if [ "$(id -u)" -eq 0 ]; then
  exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
fi
exec "$@"
