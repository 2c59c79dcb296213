// SPDX-License-Identifier: MIT
// How the processes of a distributed reduction talk: the reduction (distributed_reduction.hpp)
// needs only these three collectives, so it stays free of MPI; analysis/mpi/ implements them
// over an MPI communicator, and SoloExchange for one process alone.
#pragma once

#include <string>
#include <vector>

namespace commprof {

class ReduceExchange {
 public:
  virtual ~ReduceExchange() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Collective: `to[p]` goes to process p; returns what each process sent this one, by source.
  virtual std::vector<std::string> all_to_all(const std::vector<std::string>& to) = 0;
  /// Collective: process 0 gets every process's `mine`, by source; the others an empty list.
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  /// Collective: every process gets process 0's `text`.
  virtual std::string broadcast(const std::string& text) = 0;
};

/// One process alone: the reduction's steps that talk to others run unchanged on their own.
class SoloExchange final : public ReduceExchange {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> all_to_all(const std::vector<std::string>& to) override { return to; }
  std::vector<std::string> gather(const std::string& mine) override { return {mine}; }
  std::string broadcast(const std::string& text) override { return text; }
};

}  // namespace commprof
