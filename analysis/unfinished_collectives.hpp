// SPDX-License-Identifier: MIT
// Collectives some rank enqueued and never saw finish, set against how far the other ranks of the
// communicator got: the ranks that never started one are what the others wait for. The NCCL
// profiler plugin lists a rank's unfinished operations in its rank file's configuration
// ("unfinished": [{comm, collective, seq, ...}], with "communicators": [{name, ...}]); files
// without them contribute only how far they got.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "src/timeline/json_object.hpp"

namespace commprof {

class UnfinishedCollectives {
 public:
  struct Key {
    std::string comm;
    std::int64_t seq = 0;
    bool operator<(const Key& o) const { return comm != o.comm ? comm < o.comm : seq < o.seq; }
    template <class IO>
    friend void transfer(IO& io, Key& k) {
      io(k.comm, k.seq);
    }
  };
  struct RankState {
    std::set<std::string> comms;               // communicators the rank belongs to
    std::map<std::string, std::int64_t> last;  // highest finished seq per communicator
    std::map<Key, std::string> unfinished;     // -> collective name
    template <class IO>
    friend void transfer(IO& io, RankState& r) {
      io(r.comms, r.last, r.unfinished);
    }
  };
  using Ranks = std::map<int, RankState>;  // by rank

  /// One rank file's header: the communicators it names and what it left unfinished.
  void stage_header(int rank, const JsonObject& config);
  /// A finished COMM op of the staged file.
  void stage_finished(std::string_view comm, std::int64_t seq);
  /// The staged file was read whole and is kept / is dropped.
  void commit();
  void discard();

  /// One line per unfinished collective, in (communicator, sequence) order: where it is
  /// unfinished, which member ranks finished it, and which never started it, e.g.
  /// "hang: dp0 allreduce #12 unfinished on ranks 0 1 3; rank 2 never started it (its last on
  /// dp0: #11)".
  std::vector<std::string> findings() const;

  /// The committed ranks' states, for another process's add() (a distributed reduction).
  const Ranks& committed() const { return ranks_; }
  /// Adds ranks another process committed, as if their files had been committed here.
  void add(const Ranks& ranks);

 private:
  int staged_rank_ = -1;
  // The entry of the communicator seen last: most files' COMM ops come from few communicators,
  // so most ops update it without a lookup.
  std::string last_comm_;
  std::int64_t* last_seq_ = nullptr;
  RankState staged_;
  Ranks ranks_;
};

}  // namespace commprof
