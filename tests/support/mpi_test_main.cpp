// SPDX-License-Identifier: MIT
// main() of gtest binaries that run under mpirun: MPI at the thread level the host backend
// needs, normal gtest output from rank 0 only, failures from any rank (prefixed with the rank),
// and one verdict for the whole job: a test that failed on any rank fails everywhere.
//
// Skips are skips: where every test skipped on every rank (no GPU, fewer GPUs than ranks), or
// none was selected, the job exits kSkipExit, which CTest reports as skipped (SKIP_RETURN_CODE in
// cmake/CommprofTesting.cmake), never as passed. With COMMPROF_REQUIRE_GPU=1 (set by
// scripts/gpu-bench.sh on GPU hosts) a test skipped on any rank fails the job instead: a GPU host
// whose device detection broke must not look green.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kSkipExit = 77;  // CTest's and Automake's "skipped"

/// Replaces gtest's printer on ranks other than 0: silent, except for failed assertions.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() != nullptr ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

}  // namespace

// LeakSanitizer's question at exit (asan builds): these processes all start MPI, whose
// components keep memory until exit after they are unloaded, so none is leak-checked (as
// src/program/main.cpp answers for commprof when it started MPI).
extern "C" int __lsan_is_turned_off() { return 1; }

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return 1;
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = failed;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed != 0 && failed == 0) {
    std::fprintf(stderr, "a test failed on another rank (see its [rank R] lines)\n");
  }
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  const int to_run = unit.test_to_run_count();
  const int skipped = unit.skipped_test_count();
  int nothing_ran = to_run == 0 || skipped == to_run ? 1 : 0;
  int all_nothing_ran = nothing_ran;
  MPI_Allreduce(&nothing_ran, &all_nothing_ran, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int any_skipped = skipped > 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &any_skipped, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const char* require = std::getenv("COMMPROF_REQUIRE_GPU");
  const bool required = require != nullptr && std::strcmp(require, "1") == 0;
  int code = any_failed;
  if (code == 0 && required && (any_skipped != 0 || all_nothing_ran != 0)) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "COMMPROF_REQUIRE_GPU=1: a test skipped or none ran (see the SKIPPED lines), "
                   "which fails this job\n");
    }
    code = 1;
  } else if (code == 0 && all_nothing_ran != 0) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "every test skipped or none was selected: reported as skipped (exit %d)\n",
                   kSkipExit);
    }
    code = kSkipExit;
  }
  MPI_Finalize();
  return code;
}
