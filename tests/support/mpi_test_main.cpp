// SPDX-License-Identifier: MIT
// main() of gtest binaries that run under mpirun: MPI at the thread level the host backend
// needs, normal gtest output from rank 0 only, failures from any rank (prefixed with the rank),
// and one verdict for the whole job: a test that failed on any rank fails everywhere.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

namespace {

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
  MPI_Finalize();
  return any_failed;
}
