// SPDX-License-Identifier: MIT
// A group of ranks that run collectives together (world, a TP group, a DP group, ...).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace commprof {

/// Made by a backend (Backend::world, Communicator::split) and usable only with that backend.
/// Not thread-safe: the backend's COMM stream is its only user once work is submitted.
class Communicator {
 public:
  virtual ~Communicator() = default;
  /// Rank within this communicator, 0 ≤ rank < size.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "world", or the name given to split().
  virtual const std::string& name() const = 0;
  /// Collective over this communicator: ranks passing the same colour form a new one, ordered
  /// by key (ties by rank), as MPI_Comm_split and ncclCommSplit do.
  virtual std::unique_ptr<Communicator> split(int color, int key, const std::string& name) = 0;

  /// Per-communicator sequence number of the next collective: (name, seq) matches one collective
  /// instance across ranks, as Flight Recorder's (pg_id, seq_id) does.
  std::uint64_t next_sequence() { return sequence_++; }

 private:
  std::uint64_t sequence_ = 0;
};

}  // namespace commprof
