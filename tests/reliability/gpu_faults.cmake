# SPDX-License-Identifier: MIT
# Faults on the CUDA backend (included from tests/reliability/CMakeLists.txt when it is built; paths are
# relative to tests/): the NCCL paths the host backend cannot exercise. Two ranks, one GPU each;
# where no GPU is visible the run stops at once with "cannot run here: no CUDA device visible"
# and the tests skip (${skip_without_gpu}, set in tests/CMakeLists.txt; start_run in
# tools/run_helpers.sh), or fail under COMMPROF_REQUIRE_GPU=1. Label `gpu`: `ctest -L gpu` on a
# GPU host (NCCL_NVLS_ENABLE=0 there).
set(gpu_faults ${COMMPROF_TEST_OUT}/gpu_faults)
file(MAKE_DIRECTORY ${gpu_faults})

# A peer that stops taking part after warm-up: rank 0's NCCL kernel waits for it forever. The
# backend polls the COMM stream and ncclCommGetAsyncError instead of blocking, so after
# --timeout it aborts its communicators (ncclCommAbort, given 5 s: within a node NCCL's abort
# may wait for the silent peer to abort too), names rank, host, the collective and its sequence
# number, and the job ends (exit 1). 40 s bounds NCCL's start (a few seconds), the 5 s timeout,
# the abort and the teardown.
commprof_add_mpi_test(NAME run_cuda_hung_peer_times_out_np2 NPROCS 2 LABELS "gpu;reliability"
  TIMEOUT 40
  WRAPPER ${CHECK_RUN} --rm ${gpu_faults}/hung ${skip_without_gpu} --exit 1
    --match "error: the COMM stream on rank 0 \\(.*\\) did not finish within --timeout 5 s. last op enqueued on the COMM stream: dp\\.bucket[0-9]+\\.allreduce #[0-9]+ on communicator '[^']+' \\(a peer rank may have stopped participating\\). (NCCL communicators aborted|ncclCommAbort did not return within 5 s)"
    --
  COMMAND commprof run --backend cuda --workload dp --micro-batches 1 --steps 3 --warmup-steps 1
          --timeout 5 --enable-test-hooks --test-hang-rank 1 --out ${gpu_faults}/hung
  PROPERTIES FIXTURES_SETUP cuda_hung SKIP_RETURN_CODE 77)
# The same with a pipeline: the silent peer's send never comes, so the receiver's ncclRecv is
# what times out (a point-to-point operation, not a collective kernel).
commprof_add_mpi_test(NAME run_cuda_hung_pipeline_peer_np2 NPROCS 2 LABELS "gpu;reliability"
  TIMEOUT 40
  WRAPPER ${CHECK_RUN} --rm ${gpu_faults}/hung_pp ${skip_without_gpu} --exit 1
    --match "error: the COMM stream on rank 1 \\(.*\\) did not finish within --timeout 5 s. last op enqueued on the COMM stream: [^ ]+ on communicator '[^']+' \\(a peer rank may have stopped participating\\). (NCCL communicators aborted|ncclCommAbort did not return within 5 s)"
    --
  COMMAND commprof run --backend cuda --workload pp --pp 2 --steps 3 --warmup-steps 1
          --timeout 5 --enable-test-hooks --test-hang-rank 0 --out ${gpu_faults}/hung_pp
  PROPERTIES SKIP_RETURN_CODE 77)
# What the ranks wrote before the fault reduces, all 2 files. A skipped run (no GPU) leaves no
# directory, and the report skips too (fails under COMMPROF_REQUIRE_GPU=1).
function(commprof_gpu_report_after name dir fixture)
  add_test(NAME ${name}
    COMMAND ${CHECK_RUN} --skip-on "cannot read '[^']*': No such file or directory"
      --require COMMPROF_REQUIRE_GPU --exit 0
      --match "^# commprof report: 2 of 2 ranks, from 2 rank file\\(s\\)$"
      -- $<TARGET_FILE:commprof> report ${dir})
  set_tests_properties(${name} PROPERTIES LABELS "gpu;reliability" TIMEOUT 60
    SKIP_RETURN_CODE 77 FIXTURES_REQUIRED ${fixture})
endfunction()
commprof_gpu_report_after(report_after_cuda_hung_peer ${gpu_faults}/hung cuda_hung)

# SIGKILL to rank 1 of a long cuda run (a node crash, the OOM killer): the launcher ends the job,
# rank 0 does not hang in NCCL, and the rank files written so far stay whole and reduce.
commprof_add_launched_test(NAME run_cuda_sigkill_rank_np2 NPROCS 2
  COMMAND sh ${COMMPROF_TESTS_DIR}/tools/sigkill_rank.sh ${gpu_faults}/sigkill 2 1
          $<TARGET_FILE:commprof> -- LAUNCHER $<TARGET_FILE:commprof> run --backend cuda
          --workload dp --micro-batches 1 --steps 100000 --warmup-steps 0 --timeout 10
          --out ${gpu_faults}/sigkill)
set_tests_properties(run_cuda_sigkill_rank_np2 PROPERTIES LABELS "mpi;gpu;reliability" TIMEOUT 90
  SKIP_RETURN_CODE 77 ENVIRONMENT "${COMMPROF_TEST_MPI_ENV}" FIXTURES_SETUP cuda_sigkill)
commprof_gpu_report_after(report_after_cuda_sigkill ${gpu_faults}/sigkill cuda_sigkill)
