// SPDX-License-Identifier: MIT
#include "workloads/prediction/chakra/astra_network.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "analysis/group_time.hpp"
#include "collectives/links/link_model.hpp"

namespace commprof {
namespace {

std::string figure(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// A dimension's latency and bandwidth from its samples, by the link model's own fit (one model
// of the network for `project` and this file): time = L*steps + S*busbw_factor/B, least squares
// of relative errors, pooled over the collectives the dimension carries.
void fit(const std::vector<LinkSample>& s, NetworkDim& d) {
  std::set<std::uint64_t> sizes;
  for (const LinkSample& v : s) sizes.insert(v.bytes);
  const std::string n =
      std::to_string(s.size()) + " transfer(s) of " + std::to_string(sizes.size()) + " size(s)";
  const LinkFit f = fit_pooled_link(s);
  d.latency_ns = f.latency_us * 1e3;
  d.bandwidth_gbps = f.busbw_gbps;
  if (f.latency_us > 0 && f.busbw_gbps > 0) {
    d.how = "the link model's fit (relative errors) of time = L*steps + S*busbw_factor/B over " + n;
  } else if (f.busbw_gbps > 0) {
    d.how = "the link model's fit of the bandwidth alone (latency 0: " +
            std::string(sizes.size() > 1 ? "it came out negative" : "one size") + ") over " + n;
  } else {
    // No bandwidth term (times that do not grow with size: noise over a narrow range of
    // sizes). ASTRA-sim refuses a bandwidth of 0, so B is the one that gives the samples' total
    // time beside the fitted latency; where the latency alone exceeds it, the samples' own
    // bus bandwidth over their whole time (latency kept: a little slow, never refused).
    double bus_kb = 0, total_us = 0, latency_us = 0;
    for (const LinkSample& v : s) {
      bus_kb += static_cast<double>(v.bytes) * link_bus_factor(v.collective, v.ranks) / 1e3;
      total_us += v.time_us;
      latency_us += f.latency_us * link_steps(v.collective, v.ranks);
    }
    const bool rest = total_us > latency_us;
    d.bandwidth_gbps = bus_kb / (rest ? total_us - latency_us : total_us);  // kB/us = GB/s
    d.how = "the link model's fit of the latency alone (no bandwidth term) over " + n +
            "; B from the samples' " + (rest ? "time beyond the latency" : "whole time");
  }
}

// The kind's groups as (first rank, stride) when every one is an arithmetic run of ranks.
bool stride_of(const std::vector<std::vector<int>>& groups, int& stride) {
  stride = 0;
  for (const std::vector<int>& g : groups) {
    if (g.size() < 2) return false;
    const int s = g[1] - g[0];
    for (std::size_t i = 1; i < g.size(); ++i)
      if (g[i] - g[i - 1] != s) return false;
    if (stride != 0 && s != stride) return false;
    stride = s;
  }
  return stride > 0;
}

}  // namespace

namespace {

// Each kind's samples over every measured step, as the link model takes them: matched
// collectives, else the shortest point-to-point transfer of each size ("p2p", one step).
std::map<std::string, std::vector<LinkSample>> link_samples(const std::vector<StepGraph>& graphs) {
  std::map<std::string, std::vector<LinkSample>> samples;
  std::map<std::pair<std::string, std::uint64_t>, std::int64_t> shortest_p2p;
  for (const StepGraph& g : graphs) {
    for (const GraphCollective& c : g.collectives) {
      if (c.members.empty() || c.time_ns <= 0) continue;
      const GraphOp& first = g.ops[static_cast<std::size_t>(c.members.front())];
      const std::optional<CollectiveKind> kind = link_collective(c.collective);
      if (!kind || c.comm_size < 2 || link_bus_factor(*kind, c.comm_size) <= 0) continue;
      LinkSample v;
      v.collective = *kind;
      v.group = std::string(group_of(c.comm));
      v.ranks = c.comm_size;
      v.bytes = first.bytes;
      v.time_us = static_cast<double>(c.time_ns) / 1e3;
      samples[v.group].push_back(v);
    }
    for (const GraphOp& op : g.ops) {
      if (op.category != Category::kComm || op.collective_id >= 0 || op.end_ns <= op.start_ns)
        continue;
      if (op.collective != "send" && op.collective != "recv" && op.collective != "sendrecv")
        continue;
      const std::uint64_t transfers = op.collective == "sendrecv" ? 2 : 1;
      const auto key = std::make_pair(std::string(group_of(op.comm)), op.bytes / transfers);
      const std::int64_t t = op.end_ns - op.start_ns;
      const auto it = shortest_p2p.find(key);
      if (it == shortest_p2p.end() || t < it->second) shortest_p2p[key] = t;
    }
  }
  // Point-to-point transfers speak for a kind only where it has no matched collective.
  std::map<std::string, std::vector<LinkSample>> p2p;
  for (const auto& [key, t] : shortest_p2p) {
    LinkSample v;
    v.collective = CollectiveKind::kSendRecv;  // the link model's point-to-point transfer
    v.group = key.first;
    v.bytes = key.second;
    v.time_us = static_cast<double>(t) / 1e3;
    p2p[key.first].push_back(v);
  }
  for (auto& [kind, v] : p2p)
    if (samples[kind].empty()) samples[kind] = std::move(v);
  return samples;
}

}  // namespace

std::vector<NetworkDim> network_dimensions(const StepGraph& exported) {
  const int world = static_cast<int>(exported.ranks.size());
  // Each kind's groups in the exported step.
  std::map<std::string, std::set<int>> members;
  for (const GraphOp& op : exported.ops)
    if (op.category == Category::kComm && !op.comm.empty()) members[op.comm].insert(op.rank);
  std::map<std::string, std::vector<std::vector<int>>> kinds;
  for (const auto& [comm, ranks] : members)
    kinds[std::string(group_of(comm))].emplace_back(ranks.begin(), ranks.end());
  // Among kinds of one stride, the one with the most ops (pp's transfers before the embedding
  // group's one all-reduce, which two pipeline stages also have between them).
  std::map<std::string, std::size_t> ops_of;
  for (const GraphOp& op : exported.ops)
    if (op.category == Category::kComm && !op.comm.empty())
      ++ops_of[std::string(group_of(op.comm))];

  // From stride 1 up, a kind whose groups are runs of ranks with the current stride, as long as
  // their sizes multiply up to the world.
  std::vector<NetworkDim> dims;
  int stride = 1;
  std::set<std::string> used;
  while (stride < world) {
    std::string best;
    int best_size = 0;
    for (const auto& [kind, groups] : kinds) {
      int s = 0;
      const int size = static_cast<int>(groups.front().size());
      if (used.count(kind) != 0 || !stride_of(groups, s) || s != stride) continue;
      if (size * stride > world || world % (size * stride) != 0) continue;
      if (best.empty() || ops_of[kind] > ops_of[best]) {
        best = kind;
        best_size = size;
      }
    }
    if (best.empty()) break;
    used.insert(best);
    NetworkDim d;
    d.kind = best;
    d.npus = best_size;
    for (const auto& [kind, groups] : kinds) {
      if (kind != best && groups == kinds[best] && used.insert(kind).second)
        d.alike.push_back(kind);
    }
    dims.push_back(d);
    stride *= best_size;
  }
  if (stride != world || dims.empty()) {
    NetworkDim all;
    all.kind = "all";
    all.npus = world;
    dims = {all};
  }
  return dims;
}

void fit_measured_links(const std::vector<StepGraph>& graphs, std::vector<NetworkDim>& dims) {
  std::map<std::string, std::vector<LinkSample>> samples = link_samples(graphs);
  std::vector<LinkSample> every;
  for (const auto& [kind, v] : samples) every.insert(every.end(), v.begin(), v.end());
  for (NetworkDim& d : dims) {
    // Its own kind's samples and those of the kinds on the same ranks: one network carries them.
    std::vector<LinkSample> own;
    for (const std::string& kind : d.alike) {
      const auto it = samples.find(kind);
      if (it != samples.end()) own.insert(own.end(), it->second.begin(), it->second.end());
    }
    const auto it = samples.find(d.kind);
    if (it != samples.end()) own.insert(own.begin(), it->second.begin(), it->second.end());
    if (d.kind != "all" && !own.empty()) {
      fit(own, d);
      if (!d.alike.empty()) {
        std::string kinds;
        for (const std::string& k : d.alike) kinds += (kinds.empty() ? "" : ", ") + k;
        d.how += " (with " + kinds + ": the same ranks)";
      }
      continue;
    }
    fit(every, d);
    if (d.kind != "all") d.how = "no measured transfer of its own; every kind's: " + d.how;
  }
}

std::vector<NetworkDim> measured_network(const std::vector<StepGraph>& graphs,
                                         const StepGraph& exported) {
  std::vector<NetworkDim> dims = network_dimensions(exported);
  fit_measured_links(graphs, dims);
  return dims;
}

ChakraDims dims_of(const std::vector<NetworkDim>& dims) {
  ChakraDims out;
  out.count = static_cast<int>(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    out.dim_of_kind[dims[i].kind] = static_cast<int>(i);
    for (const std::string& k : dims[i].alike) out.dim_of_kind[k] = static_cast<int>(i);
  }
  return out;
}

double astra_bandwidth(double gbps) { return gbps * 1e9 / 1073741824.0; }

void write_network_yaml(std::ostream& os, const std::vector<NetworkDim>& dims,
                        const std::vector<std::string>& header) {
  for (const std::string& h : header) os << "# " << h << '\n';
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const NetworkDim& d = dims[i];
    os << "# dimension " << i << " (" << d.kind << ", " << d.npus << " NPUs): " << d.how << '\n';
  }
  auto list = [&](const char* key, auto value, const char* unit) {
    os << key << ": [ ";
    for (std::size_t i = 0; i < dims.size(); ++i) os << (i ? ", " : "") << value(dims[i]);
    os << " ]" << unit << '\n';
  };
  list(
      "topology", [](const NetworkDim& d) { return d.topology; }, "");
  list(
      "npus_count", [](const NetworkDim& d) { return std::to_string(d.npus); }, "");
  list(
      "bandwidth",
      [](const NetworkDim& d) { return figure("%.6g", astra_bandwidth(d.bandwidth_gbps)); },
      "  # GiB/s (2^30 B/s): ASTRA-sim's \"GB/s\"");
  list(
      "latency", [](const NetworkDim& d) { return figure("%.1f", d.latency_ns); }, "  # ns");
}

void write_comm_groups_json(std::ostream& os, const std::vector<ChakraGroup>& groups) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const ChakraGroup& g : groups) j[std::to_string(g.id)] = g.ranks;
  os << j.dump(1) << '\n';
}

}  // namespace commprof
