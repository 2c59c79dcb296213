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
/// \code
///   RankContext ctx(argc, argv, MPI_THREAD_MULTIPLE);
///   ctx.agree(config_ok, error_text);   // throws ConfigError on every rank if any failed
/// \endcode
class RankContext {
 public:
  /// Initialises MPI at `required_thread_level` or higher; throws MpiError if MPI provides less.
  RankContext(int* argc, char*** argv, int required_thread_level);
  ~RankContext();
  RankContext(const RankContext&) = delete;
  RankContext& operator=(const RankContext&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  const std::string& host() const { return host_; }
  int thread_level() const { return thread_level_; }
  MPI_Comm comm() const { return comm_; }
  /// Hostname of every rank, gathered at start (index = world rank).
  const std::vector<std::string>& hosts() const { return hosts_; }
  /// Number of distinct hosts.
  int node_count() const;

  /// Collective. If any rank passes ok == false, every rank throws ConfigError carrying the
  /// message of the lowest failing rank, so a bad option on one rank leaves no rank waiting.
  void agree(bool ok, const std::string& message, ErrorScope scope = ErrorScope::kCommand) const;
  /// Collective: true on every rank if any rank passes true.
  bool any(bool flag) const;
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
};

}  // namespace commprof
