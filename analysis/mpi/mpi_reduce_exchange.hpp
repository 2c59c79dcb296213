// SPDX-License-Identifier: MIT
// ReduceExchange over an MPI communicator. Messages of any length: MPI counts are int, so
// long ones go in pieces of 1 GiB.
#pragma once

#include <mpi.h>

#include "analysis/reduce_exchange.hpp"

namespace commprof {

class MpiReduceExchange final : public ReduceExchange {
 public:
  explicit MpiReduceExchange(MPI_Comm comm);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<std::string> all_to_all(const std::vector<std::string>& to) override;
  std::vector<std::string> gather(const std::string& mine) override;
  std::string broadcast(const std::string& text) override;
  /// An MPI window of one 64-bit count on process 0, claimed with MPI_Fetch_and_op under a
  /// passive lock held from creation to destruction (MPI_Win_free: collective).
  std::unique_ptr<ClaimCounter> counter() override;

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace commprof
