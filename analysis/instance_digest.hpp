// SPDX-License-Identifier: MIT
// What an owner of collective instances sends process 0 for the report's instance tables
// (instance_tables.hpp): sums per collective and size and per group, the counts and the first
// incomplete and inconsistent instance, the bounds the questions of order start from, and its
// candidates for the worst instances. Every sum is of integers, most of them never negative
// (saturating sums of such agree in any order): owners' digests merge into one process's.
#pragma once

#include <climits>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/collective_matching.hpp"

namespace commprof {

struct InstanceDigest {
  static constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
  // collective, comm size, bytes, in place (CollectiveInstance::in_place)
  using SizeKey = std::tuple<std::string, int, std::uint64_t, int>;

  struct SizeSums {
    std::int64_t count = 0;
    std::int64_t skew_ns = 0;
    std::int64_t wait_ns = 0;
    std::int64_t min_time_ns = std::numeric_limits<std::int64_t>::max();
    std::int64_t max_time_ns = std::numeric_limits<std::int64_t>::min();
    std::map<std::string, std::uint64_t> algos;  // NCCL's algorithm → its first instance's order
    // All-to-all(v)s whose off-rank bytes are known (CollectiveInstance::offrank_known): how
    // many, and Σ offrank_bytes (capped, as every term and the cap are the same on any process).
    std::int64_t offrank_count = 0;
    std::uint64_t offrank_bytes = 0;
  };
  // Per collective and size: Σ bytes of the instances whose busbw is bytes × factor, Σ off-rank
  // bytes of the all-to-all(v)s whose busbw is those over time, and Σ time of both.
  struct BusSums {
    std::uint64_t bytes = 0;
    std::uint64_t offrank_bytes = 0;
    std::int64_t offrank_count = 0;
    std::int64_t count = 0;
    std::int64_t time_ns = 0;
  };
  struct GroupSums {
    std::set<std::string> comms;
    int min_size = INT_MAX;
    int max_size = 0;
    std::int64_t instances = 0;
    std::int64_t incomplete = 0;
    std::uint64_t bytes = 0;
    std::int64_t time_ns = 0;
    std::int64_t skew_ns = 0;
    std::int64_t wait_ns = 0;
    std::map<std::pair<std::string, int>, BusSums> bus;  // by collective and comm size
  };
  // The first instance (in reading order) of a kind, named.
  struct First {
    std::uint64_t order = kNone;
    std::string text;
    void offer(std::uint64_t o, const std::string& t) {
      if (o < order) {
        order = o;
        text = t;
      }
    }
  };

  std::int64_t total = 0;
  std::int64_t incomplete = 0;
  std::int64_t inconsistent = 0;
  First first_incomplete;
  First first_inconsistent;
  std::map<SizeKey, SizeSums> sizes;
  std::map<std::string, GroupSums> groups;
  std::map<std::string, std::int64_t> alltoall_waits;  // by group (and MoE phase)
  std::int64_t min_start_ns = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_start_ns = std::numeric_limits<std::int64_t>::min();
  std::uint64_t min_order = kNone;
  std::uint64_t max_order = 0;
  std::vector<CollectiveInstance> worst;  // candidates

  void add(const CollectiveInstance& c);
  /// Adds another owner's digest: the sums of both, the earlier firsts, both lists of worst.
  void merge(const InstanceDigest& part);
};

template <class IO>
void transfer(IO& io, InstanceDigest::SizeSums& s) {
  io(s.count, s.skew_ns, s.wait_ns, s.min_time_ns, s.max_time_ns, s.algos, s.offrank_count,
     s.offrank_bytes);
}

template <class IO>
void transfer(IO& io, InstanceDigest::BusSums& b) {
  io(b.bytes, b.offrank_bytes, b.offrank_count, b.count, b.time_ns);
}

template <class IO>
void transfer(IO& io, InstanceDigest::GroupSums& g) {
  io(g.comms, g.min_size, g.max_size, g.instances, g.incomplete, g.bytes, g.time_ns, g.skew_ns,
     g.wait_ns, g.bus);
}

template <class IO>
void transfer(IO& io, InstanceDigest::First& f) {
  io(f.order, f.text);
}

template <class IO>
void transfer(IO& io, InstanceDigest& d) {
  io(d.total, d.incomplete, d.inconsistent, d.first_incomplete, d.first_inconsistent, d.sizes,
     d.groups, d.alltoall_waits, d.min_start_ns, d.max_start_ns, d.min_order, d.max_order, d.worst);
}

}  // namespace commprof
