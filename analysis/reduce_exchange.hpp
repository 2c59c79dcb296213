// SPDX-License-Identifier: MIT
// How the processes of a distributed reduction talk: the reduction (distributed_reduction.hpp)
// needs only these three collectives and a shared counter, so it stays free of MPI;
// analysis/mpi/ implements them over an MPI communicator, and SoloExchange for one process alone.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace commprof {

/// A count every process of an exchange shares, for handing out work as processes come free.
/// Every process destroys it at the same point of its program (for MPI, a collective).
class ClaimCounter {
 public:
  virtual ~ClaimCounter() = default;
  /// Atomically adds `n` to the count and returns the count before: this process's claim on
  /// the numbers [returned, returned + n). Needs nothing of the other processes meanwhile.
  virtual std::uint64_t claim(std::uint64_t n) = 0;
};

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
  /// Collective: a new ClaimCounter at 0, shared by every process.
  virtual std::unique_ptr<ClaimCounter> counter() = 0;
};

/// A counter of one process alone (SoloExchange's, and for any exchange of one process).
class LocalCounter final : public ClaimCounter {
 public:
  std::uint64_t claim(std::uint64_t n) override {
    const std::uint64_t before = count_;
    count_ += n;
    return before;
  }

 private:
  std::uint64_t count_ = 0;
};

/// One process alone: the reduction's steps that talk to others run unchanged on their own.
class SoloExchange final : public ReduceExchange {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> all_to_all(const std::vector<std::string>& to) override { return to; }
  std::vector<std::string> gather(const std::string& mine) override { return {mine}; }
  std::string broadcast(const std::string& text) override { return text; }
  std::unique_ptr<ClaimCounter> counter() override { return std::make_unique<LocalCounter>(); }
};

}  // namespace commprof
