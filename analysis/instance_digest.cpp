// SPDX-License-Identifier: MIT
#include "analysis/instance_digest.hpp"

#include <algorithm>

#include "analysis/group_time.hpp"
#include "analysis/saturating_sum.hpp"

namespace commprof {

void InstanceDigest::add(const CollectiveInstance& c) {
  InstanceDigest& d = *this;
  ++d.total;
  const std::string id = c.collective + " on '" + c.comm + "' seq " + std::to_string(c.seq);
  if (c.ranks_seen < c.comm_size) {
    ++d.incomplete;
    d.first_incomplete.offer(c.order, id + " (" + std::to_string(c.ranks_seen) + " of " +
                                          std::to_string(c.comm_size) + " ranks)");
  }
  if (!c.consistent) {
    ++d.inconsistent;
    d.first_inconsistent.offer(c.order, id);
  }
  SizeSums& s = d.sizes[{c.collective, c.comm_size, c.bytes, c.in_place}];
  ++s.count;
  add_saturating(s.skew_ns, c.start_skew_ns());
  add_saturating(s.wait_ns, c.wait_caused_ns);
  s.min_time_ns = std::min(s.min_time_ns, c.time_ns());
  s.max_time_ns = std::max(s.max_time_ns, c.time_ns());
  if (!c.algo.empty()) {
    const auto [it, inserted] = s.algos.try_emplace(c.algo, c.order);
    if (!inserted) it->second = std::min(it->second, c.order);
  }
  const bool offrank = is_alltoall(c.collective) && c.offrank_known();
  if (offrank) {
    ++s.offrank_count;
    add_saturating(s.offrank_bytes, c.offrank_bytes);
  }
  const std::string group(group_of(c.comm));
  GroupSums& g = d.groups[group];
  g.comms.insert(c.comm);
  g.min_size = std::min(g.min_size, c.comm_size);
  g.max_size = std::max(g.max_size, c.comm_size);
  ++g.instances;
  if (c.ranks_seen < c.comm_size) ++g.incomplete;
  g.bytes += c.bytes;
  add_saturating(g.time_ns, c.time_ns());
  add_saturating(g.skew_ns, c.start_skew_ns());
  add_saturating(g.wait_ns, c.wait_caused_ns);
  BusSums& bus = g.bus[{c.collective, c.comm_size}];
  ++bus.count;
  if (offrank) {
    ++bus.offrank_count;
    add_saturating(bus.offrank_bytes, c.offrank_bytes);
  } else {
    bus.bytes += c.bytes;
  }
  add_saturating(bus.time_ns, c.time_ns());
  if (is_alltoall(c.collective)) {
    add_saturating(d.alltoall_waits[group], c.wait_caused_ns);
    if (!c.phase.empty())
      add_saturating(d.alltoall_waits[phase_group(group, c.phase)], c.wait_caused_ns);
  }
  d.min_start_ns = std::min(d.min_start_ns, c.first_start_ns);
  d.max_start_ns = std::max(d.max_start_ns, c.first_start_ns);
  d.min_order = std::min(d.min_order, c.order);
  d.max_order = std::max(d.max_order, c.order);
}

void InstanceDigest::merge(const InstanceDigest& part) {
  total += part.total;
  incomplete += part.incomplete;
  inconsistent += part.inconsistent;
  first_incomplete.offer(part.first_incomplete.order, part.first_incomplete.text);
  first_inconsistent.offer(part.first_inconsistent.order, part.first_inconsistent.text);
  for (const auto& [key, p] : part.sizes) {
    SizeSums& s = sizes[key];
    s.count += p.count;
    add_saturating(s.skew_ns, p.skew_ns);
    add_saturating(s.wait_ns, p.wait_ns);
    s.min_time_ns = std::min(s.min_time_ns, p.min_time_ns);
    s.max_time_ns = std::max(s.max_time_ns, p.max_time_ns);
    for (const auto& [algo, order] : p.algos) {
      const auto [it, inserted] = s.algos.try_emplace(algo, order);
      if (!inserted) it->second = std::min(it->second, order);
    }
    s.offrank_count += p.offrank_count;
    add_saturating(s.offrank_bytes, p.offrank_bytes);
  }
  for (const auto& [group, p] : part.groups) {
    GroupSums& g = groups[group];
    g.comms.insert(p.comms.begin(), p.comms.end());
    g.min_size = std::min(g.min_size, p.min_size);
    g.max_size = std::max(g.max_size, p.max_size);
    g.instances += p.instances;
    g.incomplete += p.incomplete;
    g.bytes += p.bytes;
    add_saturating(g.time_ns, p.time_ns);
    add_saturating(g.skew_ns, p.skew_ns);
    add_saturating(g.wait_ns, p.wait_ns);
    for (const auto& [key, pb] : p.bus) {
      BusSums& bus = g.bus[key];
      bus.bytes += pb.bytes;
      add_saturating(bus.offrank_bytes, pb.offrank_bytes);
      bus.offrank_count += pb.offrank_count;
      bus.count += pb.count;
      add_saturating(bus.time_ns, pb.time_ns);
    }
  }
  for (const auto& [group, wait] : part.alltoall_waits) {
    add_saturating(alltoall_waits[group], wait);
  }
  min_start_ns = std::min(min_start_ns, part.min_start_ns);
  max_start_ns = std::max(max_start_ns, part.max_start_ns);
  min_order = std::min(min_order, part.min_order);
  max_order = std::max(max_order, part.max_order);
  worst.insert(worst.end(), part.worst.begin(), part.worst.end());
}

}  // namespace commprof
