#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a command and checks its exit code and output; used by CTest for CLI and bench runs.
#
#   check_run.sh [--exit N] [--match ERE]... [--no-match ERE]... [--count ERE N]...
#                [--at-most ERE N]... [--rm DIR]... [--skip N] [--skip-on ERE] [--require VAR] -- command [args...]
#
#   --exit N        the command must exit with N (default 0)
#   --match ERE     some line of stdout+stderr matches the extended regex
#   --no-match ERE  no line matches
#   --count ERE N   exactly N lines match
#   --at-most ERE N at most N lines match (what a race may leave unsaid but must never repeat)
#   --rm DIR        remove DIR before running (no stale results from an earlier run)
#   --skip N        the command exiting with N means it cannot run here: exit 77 (the tests'
#                   SKIP_RETURN_CODE) without checking anything
#   --skip-on ERE   the same when the command fails and a line matches ERE (a GPU test on a
#                   machine without one: the exit code alone would also cover bad options)
#   --require VAR   where the environment variable VAR is 1 (a host that must run this test,
#                   e.g. COMMPROF_REQUIRE_GPU on a GPU host), what --skip or --skip-on would skip
#                   fails instead, naming VAR: a host whose detection broke must not look green
# The command's output is echoed first, so `ctest --output-on-failure` shows what went wrong.
set -u

expect_exit=0
skip_exit=
skip_on=
require=
checks_file=$(mktemp) || exit 99
out_file=$(mktemp) || exit 99
err_file=$(mktemp) || exit 99
trap 'rm -f "$checks_file" "$out_file" "$err_file"' EXIT

while [ $# -gt 0 ]; do
  case "$1" in
    --exit) expect_exit=$2; shift 2 ;;
    --match) printf 'match\t%s\n' "$2" >>"$checks_file"; shift 2 ;;
    --no-match) printf 'no-match\t%s\n' "$2" >>"$checks_file"; shift 2 ;;
    --count) printf 'count\t%s\t%s\n' "$3" "$2" >>"$checks_file"; shift 3 ;;
    --at-most) printf 'at-most\t%s\t%s\n' "$3" "$2" >>"$checks_file"; shift 3 ;;
    --rm) rm -rf "$2"; shift 2 ;;
    --skip) skip_exit=$2; shift 2 ;;
    --skip-on) skip_on=$2; shift 2 ;;
    --require) require=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "check_run.sh: unknown argument '$1'" >&2; exit 99 ;;
  esac
done
[ $# -gt 0 ] || { echo "check_run.sh: no command after --" >&2; exit 99; }

echo "check_run.sh: running: $*"
# stdout and stderr apart, then stderr after stdout: under mpirun the two travel separately and
# reach the launcher in any order, so one captured together can split a line of the other.
"$@" >"$out_file" 2>"$err_file"
status=$?
cat "$err_file" >>"$out_file"
cat "$out_file"
echo "check_run.sh: exit code $status"
# skip WHY: exit 77, or 1 where --require names a variable set to 1.
skip() {
  if [ -n "$require" ] && [ "$(printenv "$require")" = 1 ]; then
    echo "check_run.sh: FAILED: $require=1, but this test would be skipped ($1)"
    exit 1
  fi
  echo "check_run.sh: skipped ($1)"
  exit 77
}
if [ -n "$skip_exit" ] && [ "$status" -eq "$skip_exit" ]; then
  skip "exit code $skip_exit"
fi
if [ -n "$skip_on" ] && [ "$status" -ne 0 ] && grep -Eq -- "$skip_on" "$out_file"; then
  skip "a line matches /$skip_on/"
fi

failed=0
fail() { echo "check_run.sh: FAILED: $*"; failed=1; }

[ "$status" -eq "$expect_exit" ] || fail "exit code $status, expected $expect_exit"

# grep -E exits 0 (a line matches), 1 (none) or 2 (the pattern is not a valid ERE): an invalid
# pattern fails the check whatever it was meant to find or not find.
matches() {
  grep -Eq -- "$1" "$out_file"
  case $? in
    0) return 0 ;;
    1) return 1 ;;
    *) fail "/$1/ is not a valid extended regular expression"; return 2 ;;
  esac
}

tab=$(printf '\t')
while IFS="$tab" read -r kind a b; do
  case "$kind" in
    match)
      matches "$a"
      [ $? -eq 1 ] && fail "no line matches /$a/" ;;
    no-match)
      matches "$a"
      [ $? -eq 0 ] && fail "a line matches /$a/: $(grep -E -m1 -- "$a" "$out_file")" ;;
    count)
      matches "$b"
      if [ $? -ne 2 ]; then
        n=$(grep -Ec -- "$b" "$out_file")
        [ "$n" -eq "$a" ] || fail "$n lines match /$b/, expected $a"
      fi ;;
    at-most)
      matches "$b"
      if [ $? -ne 2 ]; then
        n=$(grep -Ec -- "$b" "$out_file")
        [ "$n" -le "$a" ] || fail "$n lines match /$b/, expected at most $a"
      fi ;;
  esac
done <"$checks_file"

[ "$failed" -eq 0 ] && echo "check_run.sh: all checks passed"
exit "$failed"
