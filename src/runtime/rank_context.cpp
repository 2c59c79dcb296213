// SPDX-License-Identifier: MIT
#include "src/runtime/rank_context.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <thread>

#include "src/core/log.hpp"
#include "src/runtime/gather.hpp"
#include "src/runtime/launcher_env.hpp"
#include "src/runtime/mpi_check.hpp"

namespace commprof {
namespace {

std::string hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "unknown";
  }
}

}  // namespace

RankContext::RankContext(int* argc, char*** argv, int required_thread_level) {
  host_ = hostname();
  int initialized = 0;
  COMMPROF_MPI_CHECK(MPI_Initialized(&initialized));
  if (initialized) {
    COMMPROF_MPI_CHECK(MPI_Query_thread(&thread_level_));
  } else {
    COMMPROF_MPI_CHECK(MPI_Init_thread(argc, argv, required_thread_level, &thread_level_));
    owns_mpi_ = true;
  }
  COMMPROF_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
  COMMPROF_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  COMMPROF_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  COMMPROF_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  log::set_identity(rank_, host_);

  // Local rank: ranks sharing memory (one node) in world order, which is what the launcher's
  // local id means too; the environment is only a cross-check because some launchers lie about
  // it under nested allocations.
  MPI_Comm node = MPI_COMM_NULL;
  COMMPROF_MPI_CHECK(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
  COMMPROF_MPI_CHECK(MPI_Comm_rank(node, &local_rank_));
  COMMPROF_MPI_CHECK(MPI_Comm_size(node, &local_size_));
  COMMPROF_MPI_CHECK(MPI_Comm_free(&node));
  if (auto env = launcher_local_rank(); env && env->value != local_rank_) {
    log::warn(log::cat("local rank from MPI_Comm_split_type is ", local_rank_, " but ",
                       env->variable, " says ", env->value, "; using ", local_rank_));
  }

  // Every rank learns every hostname: reports name hosts, and device choice needs none of it,
  // so one fixed-size allgather at start is the simplest correct thing.
  constexpr int kHostLen = 256;
  std::vector<char> mine(kHostLen, '\0');
  std::copy_n(host_.begin(), std::min<std::size_t>(host_.size(), kHostLen - 1), mine.begin());
  std::vector<char> all(static_cast<std::size_t>(kHostLen) * static_cast<std::size_t>(size_));
  COMMPROF_MPI_CHECK(
      MPI_Allgather(mine.data(), kHostLen, MPI_CHAR, all.data(), kHostLen, MPI_CHAR, comm_));
  hosts_.reserve(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) hosts_.emplace_back(&all[static_cast<std::size_t>(r) * kHostLen]);

  if (thread_level_ < required_thread_level) {
    const std::string message =
        log::cat("MPI provides ", thread_level_name(thread_level_), " but this backend needs ",
                 thread_level_name(required_thread_level));
    agree(false, message);
  }
  log::debug(log::cat("MPI up: ", size_, " ranks, local rank ", local_rank_, " of ", local_size_,
                      ", ", thread_level_name(thread_level_)));
}

RankContext::RankContext(Solo) : uses_mpi_(false) {
  host_ = hostname();
  hosts_ = {host_};
  log::set_identity(rank_, host_);
}

RankContext::~RankContext() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  if (owns_mpi_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
}

int RankContext::node_count() const {
  return static_cast<int>(std::set<std::string>(hosts_.begin(), hosts_.end()).size());
}

MPI_Comm RankContext::comm() const {
  if (!uses_mpi_) throw std::logic_error("this process runs without MPI (no launcher started it)");
  return comm_;
}

void RankContext::agree(bool ok, const std::string& message, ErrorScope scope) const {
  if (!uses_mpi_) {
    if (!ok) throw ConfigError(message, scope);
    return;
  }
  // Lowest failing rank speaks: MPI_MIN over (failed ? rank : size).
  int candidate = ok ? size_ : rank_;
  int first_failed = size_;
  COMMPROF_MPI_CHECK(MPI_Allreduce(&candidate, &first_failed, 1, MPI_INT, MPI_MIN, comm_));
  if (first_failed == size_) return;
  std::string text = broadcast_string(message, first_failed, comm_);
  if (first_failed != 0) text = log::cat(text, " (on rank ", first_failed, ")");
  throw ConfigError(text, scope);
}

int RankContext::any_bits(int bits) const {
  if (!uses_mpi_) return bits;
  int result = 0;
  COMMPROF_MPI_CHECK(MPI_Allreduce(&bits, &result, 1, MPI_INT, MPI_BOR, comm_));
  return result;
}

int RankContext::broadcast(int value, int root) const {
  if (uses_mpi_) COMMPROF_MPI_CHECK(MPI_Bcast(&value, 1, MPI_INT, root, comm_));
  return value;
}

std::string RankContext::broadcast(const std::string& value, int root) const {
  return uses_mpi_ ? broadcast_string(value, root, comm_) : value;
}

std::vector<std::string> RankContext::gather(const std::string& value) const {
  return uses_mpi_ ? gather_strings(value, comm_) : std::vector<std::string>{value};
}

void RankContext::barrier() const {
  if (uses_mpi_) COMMPROF_MPI_CHECK(MPI_Barrier(comm_));
}

namespace {
// The arrival notes of barrier_within(): a tag of its own on the context's communicator (the
// control plane's other point-to-point messages use low tags).
constexpr int kArrivalTag = 0x7a11;
constexpr int kNamedArrivals = 1024;
}  // namespace

bool RankContext::barrier_within(double timeout_s, std::vector<int>& arrived) const {
  if (timeout_s <= 0.0 || !uses_mpi_) {
    barrier();
    return true;
  }
  // Rank 0 hears from each other rank as it arrives, so a barrier that never completes still
  // tells rank 0 who did not come; the barrier itself is the Ibarrier. Up to kNamedArrivals
  // ranks: beyond, the notes would cost rank 0 a receive per rank and step, and the missing
  // ranks are left to `commprof diagnose` of the rank files (whose records end early).
  std::vector<MPI_Request> notes;
  std::vector<int> note_values(static_cast<std::size_t>(size_), 0);
  const bool named = size_ <= kNamedArrivals;
  if (!named) {
    // no notes: `arrived` stays empty on a timeout
  } else if (rank_ == 0) {
    notes.resize(static_cast<std::size_t>(size_ - 1));
    for (int r = 1; r < size_; ++r) {
      COMMPROF_MPI_CHECK(MPI_Irecv(&note_values[static_cast<std::size_t>(r)], 1, MPI_INT, r,
                                   kArrivalTag, comm_, &notes[static_cast<std::size_t>(r - 1)]));
    }
  } else {
    notes.resize(1);
    COMMPROF_MPI_CHECK(MPI_Isend(&rank_, 1, MPI_INT, 0, kArrivalTag, comm_, notes.data()));
  }
  MPI_Request all = MPI_REQUEST_NULL;
  COMMPROF_MPI_CHECK(MPI_Ibarrier(comm_, &all));
  // The other ranks give rank 0 a second more: it alone can name who is missing, and the
  // first rank to give up ends the job (MPI_Abort) before a later one could speak.
  const double wait_s = rank_ == 0 ? timeout_s : timeout_s + 1.0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(wait_s));
  int done = 0;
  while (true) {
    COMMPROF_MPI_CHECK(MPI_Test(&all, &done, MPI_STATUS_IGNORE));
    if (done != 0 || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::yield();
  }
  if (done != 0) {  // every rank sent its note before entering the barrier: these complete
    COMMPROF_MPI_CHECK(
        MPI_Waitall(static_cast<int>(notes.size()), notes.data(), MPI_STATUSES_IGNORE));
    return true;
  }
  arrived.clear();
  if (named) arrived.push_back(rank_);
  if (rank_ == 0 && named) {
    for (int r = 1; r < size_; ++r) {
      int got = 0;
      COMMPROF_MPI_CHECK(
          MPI_Test(&notes[static_cast<std::size_t>(r - 1)], &got, MPI_STATUS_IGNORE));
      if (got != 0) arrived.push_back(r);
    }
  }
  return false;  // the requests stay posted: the job ends (MPI_Abort) after this
}

void RankContext::abort(int code) {
  if (!uses_mpi_) std::_Exit(code);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort should not return; make sure the process ends if it does
}

}  // namespace commprof
