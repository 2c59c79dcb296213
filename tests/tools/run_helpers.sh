# SPDX-License-Identifier: MIT
# Shared by the fault-injection scripts (sourced): start a `commprof run` in the background and
# wait, bounded, for every rank's first file; wait, bounded, for the job to end. Both bounds are
# multiplied by COMMPROF_TEST_TIME_SCALE (sanitizer builds run slower; see CommprofTesting.cmake).
scale=${COMMPROF_TEST_TIME_SCALE:-1}

# start_run OUTDIR NRANKS command...: sets $launcher; exits 1 if the files never appear (60 s x
# scale), or at once when the job ends before they do (its log is shown); exits 77 (skip) when
# that is because the backend has no GPU here, or 1 there under COMMPROF_REQUIRE_GPU=1 (a GPU
# host whose device detection broke must not look green).
start_run() {
  _out=$1; _nranks=$2; shift 2
  "$@" >"$_out.log" 2>&1 &
  launcher=$!
  _i=0; _n=0
  while [ $_i -lt $((600 * scale)) ]; do
    _n=$(ls "$_out"/rank-*.json 2>/dev/null | wc -l)
    [ "$_n" -ge "$_nranks" ] && return 0
    if ! kill -0 "$launcher" 2>/dev/null; then
      if grep -q "cannot run here: no CUDA device visible" "$_out.log"; then
        cat "$_out.log"
        if [ "${COMMPROF_REQUIRE_GPU:-0}" = 1 ]; then
          echo "FAIL: COMMPROF_REQUIRE_GPU=1, but no GPU is visible: this test would be skipped"
          exit 1
        fi
        echo "skipped: no GPU here"; exit 77
      fi
      cat "$_out.log"; echo "FAIL: the job ended before every rank wrote its file"; exit 1
    fi
    _i=$((_i + 1)); sleep 0.1
  done
  cat "$_out.log"; echo "FAIL: ranks never wrote their files"; kill -9 "$launcher"; exit 1
}

# rank_pids BIN OUTDIR: the pids of the ranks of this test's job: their command line starts with
# the binary (a fault script's does not) and its --out is OUTDIR, ended there (run_signal_int's
# unended pattern once matched the ranks of run_signal_int_launcher, running beside it, and
# interrupted them).
rank_pids() {
  pgrep -f "^$1 run .*--out $2( |\$)"
}

# wait_run: waits up to 30 s x scale for $launcher to end and sets $rc; exits 1 if it does not end.
wait_run() {
  _i=0
  while kill -0 "$launcher" 2>/dev/null && [ $_i -lt $((300 * scale)) ]; do
    _i=$((_i + 1)); sleep 0.1
  done
  if kill -0 "$launcher" 2>/dev/null; then
    echo "FAIL: still running $((30 * scale)) s after the fault"; kill -9 "$launcher"; exit 1
  fi
  wait "$launcher"; rc=$?
}

# run_shown NAME command...: runs the command to its end, prints its output (both streams) and
# keeps it in $out for the checks that follow; exits 1, naming the checker NAME, if it failed.
run_shown() {
  _name=$1; shift
  out=$("$@" 2>&1)
  _status=$?
  printf '%s\n' "$out"
  if [ "$_status" -ne 0 ]; then
    echo "$_name: FAILED: the command exited with $_status"
    exit 1
  fi
}
