# SPDX-License-Identifier: MIT
# Output faults (included from tests/reliability/CMakeLists.txt; paths relative to tests/): a write that
# fails must name the file and the system's reason, end with a non-zero exit, and lose nothing
# written before. Every fault is real and works as root (CI): root ignores permission bits, so
# they are tested as `nobody`; a file-size limit and /dev/full bind root too.
set(faults ${COMMPROF_TEST_OUT}/output_faults)
file(MAKE_DIRECTORY ${faults})

# These runs time every step (--op-timing activity): each append is a whole step of ops. The
# limits below come from the same job's rank files written without a limit (3 steps): a limit
# half a step past the steps that must fit (tools/rank_file_step_bytes.sh), so a step of another
# size moves the limit with it (a step of the tiny dp model, one micro-batch, is ~23 KB today).
set(fault_run run --backend host --workload dp --micro-batches 1 --warmup-steps 0
    --op-timing activity)
commprof_add_mpi_test(NAME run_fault_limits_reference_np4 NPROCS 4 LABELS reliability
  WRAPPER ${CHECK_RUN} --rm ${faults}/reference --exit 0 --
  COMMAND commprof ${fault_run} --steps 3 --out ${faults}/reference
  PROPERTIES FIXTURES_SETUP fault_limits)
# RLIMIT_FSIZE on rank 2 (what `ulimit -f` sets): each step is appended to its rank file, and
# the limit lets steps 1 and 2 through and stops the third with EFBIG (commprof ignores SIGXFSZ,
# which would kill it without a word). Rank 2 names the file, the job ends (exit 1), and its file
# of two steps stays whole beside the others'.
# Open MPI's shared-memory transport keeps its segment in a file the limit would also stop, so
# the ranks talk TCP over loopback here.
commprof_add_mpi_test(NAME run_file_size_limit_np4 NPROCS 4 LABELS reliability
  WRAPPER ${CHECK_RUN} --rm ${faults}/fsize --exit 1
    --count "^.rank 2 [^ ]+. error: cannot write '.*/fsize/rank-2\\.json': File too large. its earlier steps are kept$" 1
    --no-match "signal 25|File size limit exceeded" --
  COMMAND sh ${COMMPROF_TESTS_DIR}/tools/fsize_limit_on_rank.sh 2
          after:2:${faults}/reference/rank-2.json
          $<TARGET_FILE:commprof> ${fault_run} --steps 6 --out ${faults}/fsize
  PROPERTIES FIXTURES_SETUP fsize FIXTURES_REQUIRED fault_limits)
set_tests_properties(run_file_size_limit_np4 PROPERTIES
  ENVIRONMENT_MODIFICATION "OMPI_MCA_btl=set:self,tcp")
# What was written stays: all four files reduce; rank 2 holds exactly its two steps, the others
# two or three (the job may end while they write their third).
commprof_add_cli_test(report_after_file_size_limit --exit 0
  --match "^# commprof report: 4 of 4 ranks, from 4 rank file\\(s\\)$"
  --count "^ 2 +[^ ]+ +cpu +2 " 1 --count "^ [013] +[^ ]+ +cpu +[23] " 3
  -- ${prog} report ${faults}/fsize)
set_tests_properties(report_after_file_size_limit PROPERTIES FIXTURES_REQUIRED fsize)
set_property(TEST report_after_file_size_limit APPEND PROPERTY LABELS reliability)
add_test(NAME run_file_size_limit_no_temp_file
  COMMAND sh -c "test -d ${faults}/fsize && ls ${faults}/fsize && ! ls ${faults}/fsize | grep -q '^rank-2\\.json\\.tmp'")
set_tests_properties(run_file_size_limit_no_temp_file PROPERTIES LABELS reliability
                                                             FIXTURES_REQUIRED fsize)

# A disk that fills up: --out on a small tmpfs (in a user namespace; skipped where the system
# allows none), with room for the four rank files of one step each (the reference's pages) and
# not of two: ENOSPC, named; the job ends (exit 1) and the files written before reduce.
commprof_add_launched_test(NAME run_disk_full_np4 NPROCS 4
  COMMAND ${CHECK_RUN} --skip 77 --exit 0 --match "^run exit code 1$"
    --match "error: cannot write '${faults}/tmpfs/out/rank-[0-3]\\.json': No space left on device"
    --match "^# commprof report: 4 of 4 ranks, from 4 rank file\\(s\\)$"
    --match "^report exit code 0$" --
    sh ${COMMPROF_TESTS_DIR}/tools/small_tmpfs_run.sh after:1:${faults}/reference ${faults}/tmpfs
       ${faults}/tmpfs/out $<TARGET_FILE:commprof> LAUNCHER $<TARGET_FILE:commprof>
       ${fault_run} --steps 6 --out ${faults}/tmpfs/out)
set_tests_properties(run_disk_full_np4 PROPERTIES LABELS "mpi;reliability" TIMEOUT 120
  SKIP_RETURN_CODE 77 PROCESSORS 4 ENVIRONMENT "${COMMPROF_TEST_MPI_ENV}"
  FIXTURES_REQUIRED fault_limits)
# Where user namespaces are missing that test skips (77), unless COMMPROF_REQUIRE_USERNS=1 makes
# the skip a failure; both checked with an `unshare` that always fails.
set(no_userns ${COMMPROF_TEST_OUT}/no_userns)
file(MAKE_DIRECTORY ${no_userns})
file(WRITE ${no_userns}/unshare "#!/bin/sh
exit 1
")
file(CHMOD ${no_userns}/unshare PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
foreach(require 0 1)
  if(require)
    set(expect --exit 1 --count "^small_tmpfs_run.sh: COMMPROF_REQUIRE_USERNS=1, but" 1)
  else()
    set(expect --exit 77 --count "^small_tmpfs_run.sh: skipped: " 1)
  endif()
  add_test(NAME disk_full_without_userns_require${require}
    COMMAND ${CHECK_RUN} ${expect} -- env PATH=${no_userns}:/usr/bin:/bin
            COMMPROF_REQUIRE_USERNS=${require} sh ${COMMPROF_TESTS_DIR}/tools/small_tmpfs_run.sh
            16k ${no_userns}/mnt ${no_userns}/out true true)
  set_tests_properties(disk_full_without_userns_require${require} PROPERTIES LABELS reliability)
endforeach()
# Root in a container that forbids user namespaces (an `unshare` that refuses -r) still mounts
# the tmpfs, in a mount namespace only: 32 KB written into 16 KB fail with ENOSPC. Not root: the
# fallback is not taken and the test skips.
set(no_userns_root ${COMMPROF_TEST_OUT}/no_userns_root)
file(MAKE_DIRECTORY ${no_userns_root})
file(WRITE ${no_userns_root}/unshare "#!/bin/sh
case \"$1\" in -r*) echo 'unshare: user namespaces are not allowed here' >&2; exit 1 ;; esac
exec /usr/bin/unshare \"$@\"
")
file(CHMOD ${no_userns_root}/unshare PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
add_test(NAME disk_full_without_userns_as_root
  COMMAND ${CHECK_RUN} --skip 77 --exit 0 --count "^small_tmpfs_run.sh: namespace: unshare -m$" 1
    --match "No space left on device" --match "^run exit code 1$" --
    env PATH=${no_userns_root}:/usr/bin:/bin COMMPROF_REQUIRE_USERNS=0
        sh ${COMMPROF_TESTS_DIR}/tools/small_tmpfs_run.sh 16k ${no_userns_root}/mnt
        ${no_userns_root}/mnt true sh -c "dd if=/dev/zero of=${no_userns_root}/mnt/f bs=1k count=32")
set_tests_properties(disk_full_without_userns_as_root PROPERTIES LABELS reliability
                                                                SKIP_RETURN_CODE 77)

# --out through a regular file (ENOTDIR) and --out in a directory the user may not write
# (EACCES): refused by every rank before anything is measured, one line from rank 0, exit 2.
commprof_add_mpi_test(NAME run_out_under_a_file_np4 NPROCS 4 LABELS reliability
  WRAPPER ${CHECK_RUN} --exit 2
    --count "^commprof run: error: cannot create output directory '.*/CMakeLists\\.txt/out': Not a directory$" 1
    --no-match "step time" --
  COMMAND commprof run ${run_common} --workload dp
          --out ${COMMPROF_TESTS_DIR}/CMakeLists.txt/out)
commprof_add_mpi_test(NAME run_out_not_writable_np4 NPROCS 4 LABELS reliability
  WRAPPER ${CHECK_RUN} --exit 2
    --count "^commprof run: error: cannot write in output directory '.*/read_only': Permission denied$" 1
    --no-match "step time" --
    sh ${COMMPROF_TESTS_DIR}/tools/read_only_dir_run.sh ${faults}/read_only
  COMMAND commprof run ${run_common} --workload dp --out ${faults}/read_only)

# Reports: into a path through a regular file, onto /dev/full (ENOSPC from the kernel: written in
# place, never replaced by a renamed file, which as root would swap the device for a regular
# file), to a standard output that is /dev/full, and over an earlier report under a file-size
# limit, which must leave the earlier report as it was. (Regular expressions here avoid unpaired
# square brackets: CMake's lists would not split inside them.)
commprof_add_report_test(report_output_under_a_file --exit 1
  --count "error: cannot write '.*/CMakeLists\\.txt/report\\.txt': Not a directory \\(creating '.*/report\\.txt\\.tmp\\.[0-9]+'\\)$" 1
  -- ${prog} report ${synth_dir} -o ${COMMPROF_TESTS_DIR}/CMakeLists.txt/report.txt)
commprof_add_report_test(report_to_dev_full --exit 1
  --count "error: cannot write '/dev/full': No space left on device$" 1
  -- ${prog} report ${synth_dir} --format json -o /dev/full)
set_tests_properties(report_to_dev_full PROPERTIES FIXTURES_SETUP dev_full)
add_test(NAME report_to_dev_full_keeps_the_device COMMAND test -c /dev/full)
set_tests_properties(report_to_dev_full_keeps_the_device PROPERTIES LABELS reliability
                                                                    FIXTURES_REQUIRED dev_full)
commprof_add_report_test(report_stdout_full --exit 1
  --count "error: cannot write the report to standard output: No space left on device$" 1
  -- sh -c "exec ${prog} report ${synth_dir} >/dev/full")
set(kept_html ${faults}/kept.html)
commprof_add_report_test(report_file_size_limit_keeps_earlier --exit 0
  --match "^ok: the earlier report is unchanged and no temporary file is left$" --
  sh ${COMMPROF_TESTS_DIR}/tools/overwrite_under_fsize_limit.sh ${kept_html} 4096
     ${prog} report ${synth_dir} --format html -o ${kept_html})
foreach(t report_output_under_a_file report_to_dev_full report_stdout_full
          report_file_size_limit_keeps_earlier)
  set_property(TEST ${t} APPEND PROPERTY LABELS reliability)
endforeach()
