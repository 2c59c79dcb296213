// SPDX-License-Identifier: MIT
// The process's place in the job: MPI world rank and size, local rank and size on its node,
// hostname, and the control-plane collectives commprof itself needs (agreeing on errors,
// gathering results). Backends use their own duplicated communicators, never this one.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "src/core/errors.hpp"

namespace commprof {

/// Owns MPI initialisation for the process. Created once in main(), before any backend.
/// Not copyable. Finalises MPI on destruction unless abort() was called.
///
/// A command that runs no backend, started without a launcher, gets a solo context instead: one
/// rank and no MPI at all. Starting MPI alone costs a process a third of a second (Open MPI
/// loads its components and forks a daemon), and processes that start it side by side race on
/// the session directory under $TMPDIR (one of them fails in MPI_Init with "File exists"). Its
/// collectives are those of one rank; comm() throws, so a path that needs MPI says so.
///
/// \code
///   RankContext ctx(argc, argv, MPI_THREAD_MULTIPLE);
///   ctx.agree(config_ok, error_text);   // throws ConfigError on every rank if any failed
/// \endcode
class RankContext {
 public:
  /// Initialises MPI at `required_thread_level` or higher; throws MpiError if MPI provides less.
  RankContext(int* argc, char*** argv, int required_thread_level);
  /// The solo context: rank 0 of 1, on this host, without MPI.
  struct Solo {};
  explicit RankContext(Solo);
  ~RankContext();
  RankContext(const RankContext&) = delete;
  RankContext& operator=(const RankContext&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  const std::string& host() const { return host_; }
  int thread_level() const { return thread_level_; }
  /// False for the solo context.
  bool uses_mpi() const { return uses_mpi_; }
  /// The job's communicator; throws std::logic_error in the solo context.
  MPI_Comm comm() const;
  /// Hostname of every rank, gathered at start (index = world rank).
  const std::vector<std::string>& hosts() const { return hosts_; }
  /// Number of distinct hosts.
  int node_count() const;

  /// Collective. If any rank passes ok == false, every rank throws ConfigError carrying the
  /// message of the lowest failing rank, so a bad option on one rank leaves no rank waiting.
  void agree(bool ok, const std::string& message, ErrorScope scope = ErrorScope::kCommand) const;
  /// Collective: true on every rank if any rank passes true.
  bool any(bool flag) const { return any_bits(flag ? 1 : 0) != 0; }
  /// Collective: the bitwise OR of every rank's `bits` on every rank (several flags, one call).
  int any_bits(int bits) const;
  /// Collective: `value` of rank `root` on every rank.
  int broadcast(int value, int root = 0) const;
  std::string broadcast(const std::string& value, int root = 0) const;
  /// Collective: every rank's `value`, in rank order, on rank 0 (empty elsewhere).
  std::vector<std::string> gather(const std::string& value) const;
  void barrier() const;
  /// Collective: a barrier that gives up after `timeout_s` (<= 0: waits as barrier() does).
  /// Returns true when every rank arrived. On false, `arrived` holds the ranks known to have
  /// arrived: MPI's barrier names none, so each rank also tells rank 0 it arrived, and only rank
  /// 0 knows the list (elsewhere it holds this rank alone); beyond 1,024 ranks no rank tells
  /// (a receive per rank and step on rank 0) and it is empty. The run is to end after a false.
  bool barrier_within(double timeout_s, std::vector<int>& arrived) const;

  /// Ends every rank of the job with `code`; used when one rank fails alone and the others
  /// might otherwise wait forever in a collective.
  [[noreturn]] void abort(int code);

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  int thread_level_ = MPI_THREAD_SINGLE;
  std::string host_;
  std::vector<std::string> hosts_;
  MPI_Comm comm_ = MPI_COMM_NULL;  // duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN
  bool owns_mpi_ = false;
  bool uses_mpi_ = true;
};

}  // namespace commprof
