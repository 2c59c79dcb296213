// SPDX-License-Identifier: MIT
#include "workloads/prediction/target_graph.hpp"

#include <map>
#include <set>

#include "collectives/links/link_model.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "workloads/layout.hpp"
#include "workloads/prediction/measured_rates.hpp"

namespace commprof {
namespace {

// The communicator a group resolves to on this rank, named as the executor's splits name it.
struct CommOf {
  std::string name;
  const std::vector<int>* ranks = nullptr;
};

CommOf comm_of(const RankPlace& p, Group g) {
  switch (g) {
    case Group::kTp:
      return {log::cat("tp", p.tp_group_id), &p.tp_group};
    case Group::kDp:
      return {log::cat("dp", p.dp_group_id), &p.dp_group};
    case Group::kPp:
      return {log::cat("pp", p.pp_group_id), &p.pp_group};
    case Group::kEmbedding:
      return {log::cat("embedding", p.pp_group_id), &p.embedding_group};
    case Group::kCp:
      return {log::cat("cp", p.cp_group_id), &p.cp_group};
    case Group::kEp:
      return {log::cat("ep", p.ep_group_id), &p.ep_group};
    case Group::kEtp:
      return {log::cat("etp", p.etp_group_id), &p.etp_group};
    case Group::kEdp:
      return {log::cat("edp", p.edp_group_id), &p.edp_group};
    case Group::kTpEp:
      return {log::cat("tp_ep", p.tp_ep_group_id), &p.tp_ep_group};
    case Group::kNone:
      break;
  }
  throw Error("projection: a communication op without a group");
}

}  // namespace

TargetGraph build_target_graph(const WorkloadConfig& target, int gpus_per_node) {
  const ParallelLayout& l = target.layout;
  const int world = l.world();
  auto node_of = [&](int rank) { return gpus_per_node > 0 ? rank / gpus_per_node : 0; };
  TargetGraph out;
  out.nodes = node_of(world - 1) + 1;
  StepGraph& g = out.graph;
  g.step = 0;
  // Collectives by (comm, seq) → their graph collective.
  std::map<std::pair<std::string, std::int64_t>, int> collective_at;
  for (int r = 0; r < world; ++r) {
    const RankPlace place = place_rank(l, r);
    const OpPlan plan = build_plan(target, place);
    const int base = static_cast<int>(g.ops.size());
    g.ranks.push_back({r, 0, base, static_cast<int>(plan.ops.size())});
    std::map<std::string, std::int64_t> seq;
    int last_on[3] = {-1, -1, -1};
    int host_wait = -1;  // the last op the host waited for: every later op follows it
    for (const PlannedOp& op : plan.ops) {
      GraphOp v;
      v.rank = r;
      v.index = op.id;
      v.category = op.stream;
      v.name = op.name;
      v.stream = category_name(op.stream);
      int& last = last_on[index_of(op.stream)];
      if (last >= 0) v.preds.push_back(base + last);
      for (const int d : op.deps) v.preds.push_back(base + d);
      if (host_wait >= 0 && host_wait != last) v.preds.push_back(base + host_wait);
      last = op.id;
      if (op.host_waits) host_wait = op.id;
      TargetOp t;
      t.cls = op_class(op.name);
      t.bytes = op.bytes;
      t.flops = op.flops;
      t.work = op.flops > 0 ? TargetOp::Work::kFlops : TargetOp::Work::kBytes;
      if (const auto* fixed = std::get_if<PlannedCompute>(&op.call)) {
        t.work = TargetOp::Work::kFixed;
        t.fixed_ns = fixed->ns;
      } else if (op.is<PlannedCollective>() || op.is<PlannedP2P>()) {
        const CommOf comm = comm_of(place, op.group());
        t.work = TargetOp::Work::kCollective;
        t.group = group_name(op.group());
        t.comm_size = static_cast<int>(comm.ranks->size());
        std::set<int> nodes;
        for (const int m : *comm.ranks) nodes.insert(node_of(m));
        t.inter_node = nodes.size() > 1;
        v.comm = comm.name;
        v.comm_size = t.comm_size;
        if (const auto* c = std::get_if<PlannedCollective>(&op.call)) {
          v.collective = collective_name(c->kind);
          v.seq = seq[comm.name]++;
          t.collective = c->kind;  // kSendRecv: the link model's point-to-point transfer
          const auto [it, fresh] = collective_at.try_emplace(
              std::make_pair(comm.name, v.seq), static_cast<int>(g.collectives.size()));
          if (fresh) {
            GraphCollective gc;
            gc.comm = comm.name;
            gc.collective = v.collective;
            gc.seq = v.seq;
            gc.comm_size = t.comm_size;
            g.collectives.push_back(gc);
          }
          v.collective_id = it->second;
          g.collectives[static_cast<std::size_t>(it->second)].members.push_back(base + op.id);
        } else {
          const PlannedP2P& p = op.as<PlannedP2P>();
          v.collective = p.name();
          t.collective = CollectiveKind::kSendRecv;
          t.comm_size = 2;
          // The peers' world ranks, as the executor records them: match_transfers pairs them.
          for (const P2PTransfer& s : p.sends) {
            if (s.peer >= 0) v.send_to.push_back((*comm.ranks)[static_cast<std::size_t>(s.peer)]);
          }
          for (const P2PTransfer& s : p.recvs) {
            if (s.peer >= 0) v.recv_from.push_back((*comm.ranks)[static_cast<std::size_t>(s.peer)]);
          }
        }
      }
      g.ops.push_back(std::move(v));
      out.ops.push_back(t);
    }
  }
  // Each send with its receive, pairwise: a transfer ends once both its sides have arrived, and
  // a grouped op once every transfer it holds has (a chain of grouped ops does not end together).
  match_transfers(g);
  if (g.unmatched_transfers > 0) {
    throw Error(log::cat("projection: ", g.unmatched_transfers,
                         " transfer(s) of the target's plans have no other side (a send without "
                         "its receive, or the reverse)"));
  }
  return out;
}

}  // namespace commprof
