// SPDX-License-Identifier: MIT
#include "workloads/prediction/chakra/chakra_trace.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "analysis/group_time.hpp"
#include "src/core/errors.hpp"
#include "workloads/prediction/chakra/protobuf_writer.hpp"

namespace commprof {

const std::vector<std::string>& chakra_losses() {
  static const std::vector<std::string> kLosses = {
      "ASTRA-sim runs one compute node and one communication node per rank at a time: commprof's "
      "MEM stream (copies, memory-bound passes) becomes COMP nodes that wait for compute, and "
      "compute that overlapped other compute is serialised",
      "durations are whole microseconds (rounded; an op under 0.5 us becomes 0, which ASTRA-sim "
      "runs as 1 ns); collectives carry their transfer time (the shortest member's), which "
      "ASTRA-sim simulates anew from comm_size and the network",
      "host gaps (the time a stream idled between ops) are not nodes: ASTRA-sim issues a node as "
      "soon as its dependencies end, so launch delays vanish",
      "the order across streams is what the recorded waits say; without them (imports) only "
      "stream order, and compute may start earlier than it did",
      "point-to-point tags number the transfers between each pair of ranks in issue order; a "
      "reduce has no simulation in ASTRA-sim's workload layer today",
      "comm_size is what ASTRA-sim reads: an all-gather's is each rank's input (the output over "
      "the group's ranks), and every member of a collective carries the largest member's size, "
      "so an uneven all-to-allv is simulated as an even one of its largest rank's bytes",
      "num_ops is written only where the run recorded FLOPs: ASTRA-sim's replay mode (the "
      "durations) runs the traces, its roofline mode does not",
  };
  return kLosses;
}

const ChakraAttr* ChakraNode::attr(const std::string& n) const {
  for (const ChakraAttr& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

namespace {

ChakraAttr attr_bool(const char* name, bool v) {
  return {name, ChakraAttr::Kind::kBool, v ? 1 : 0, {}, {}};
}
ChakraAttr attr_int(const char* name, ChakraAttr::Kind kind, std::int64_t v) {
  return {name, kind, v, {}, {}};
}
ChakraAttr attr_text(const char* name, std::string v) {
  return {name, ChakraAttr::Kind::kString, 0, std::move(v), {}};
}

std::uint64_t micros(std::int64_t ns) {
  return ns <= 0 ? 0 : static_cast<std::uint64_t>((ns + 500) / 1000);
}

// commprof's collective names as Chakra's CollectiveCommType; false for those it has none of.
bool comm_type_of(const std::string& collective, chakra::CollectiveCommType& out) {
  using chakra::CollectiveCommType;
  static const std::map<std::string, CollectiveCommType> kTypes = {
      {"allreduce", CollectiveCommType::kAllReduce},
      {"allgather", CollectiveCommType::kAllGather},
      {"reducescatter", CollectiveCommType::kReduceScatter},
      {"alltoall", CollectiveCommType::kAllToAll},
      {"alltoallv", CollectiveCommType::kAllToAll},
      // Chakra has no uneven kinds: the even ones of the same total bytes.
      {"allgatherv", CollectiveCommType::kAllGather},
      {"reducescatterv", CollectiveCommType::kReduceScatter},
      {"broadcast", CollectiveCommType::kBroadcast},
      {"reduce", CollectiveCommType::kReduce},
  };
  const auto it = kTypes.find(collective);
  if (it == kTypes.end()) return false;
  out = it->second;
  return true;
}

bool is_point_to_point(const std::string& collective) {
  return collective == "send" || collective == "recv" || collective == "sendrecv";
}

// One transfer of a point-to-point op: a send or a receive, of activations (forward through the
// pipeline) or of their gradients (backward).
struct Transfer {
  bool send = true;
  bool forward = true;
};

// The transfers a commprof pipeline op names, in the order it posts them ("pp.send_act+recv_grad
// .mb3": a send of activations, then a receive of gradients); empty when the name says none.
std::vector<Transfer> transfers_of(const std::string& name) {
  std::vector<Transfer> out;
  std::size_t from = 0;
  while (from <= name.size()) {
    const std::size_t plus = std::min(name.find('+', from), name.size());
    const std::string_view part(name.data() + from, plus - from);
    for (const auto& [word, t] : {std::pair<const char*, Transfer>{"send_act", {true, true}},
                                  {"send_grad", {true, false}},
                                  {"recv_act", {false, true}},
                                  {"recv_grad", {false, false}}}) {
      if (part.find(word) != std::string_view::npos) {
        out.push_back(t);
        break;
      }
    }
    from = plus + 1;
  }
  return out;
}

// Each rank's ops in an order where every op comes after what it follows (the file's order
// wherever that holds: the lowest index first among those ready), ranks one after another, so
// each node's dependencies name nodes written before it. Throws Error on a cycle (a file whose
// waits contradict its streams' order).
std::vector<int> emission_order(const StepGraph& g) {
  std::vector<int> out;
  out.reserve(g.ops.size());
  for (const GraphRank& r : g.ranks) {
    std::vector<int> waiting(static_cast<std::size_t>(r.ops), 0);
    std::vector<std::vector<int>> next(static_cast<std::size_t>(r.ops));
    for (int i = 0; i < r.ops; ++i) {
      const GraphOp& op = g.ops[static_cast<std::size_t>(r.first_op + i)];
      std::set<int> preds(op.preds.begin(), op.preds.end());
      waiting[static_cast<std::size_t>(i)] = static_cast<int>(preds.size());
      for (const int p : preds) next[static_cast<std::size_t>(p - r.first_op)].push_back(i);
    }
    std::set<int> ready;
    for (int i = 0; i < r.ops; ++i)
      if (waiting[static_cast<std::size_t>(i)] == 0) ready.insert(i);
    int emitted = 0;
    while (!ready.empty()) {
      const int i = *ready.begin();
      ready.erase(ready.begin());
      out.push_back(r.first_op + i);
      ++emitted;
      for (const int n : next[static_cast<std::size_t>(i)])
        if (--waiting[static_cast<std::size_t>(n)] == 0) ready.insert(n);
    }
    if (emitted != r.ops) {
      throw Error("rank " + std::to_string(r.rank) + ", step " + std::to_string(g.step) +
                  ": the ops' waits and stream order form a cycle; no trace can order them");
    }
  }
  return out;
}

struct RankBuild {
  ChakraRankTrace* trace = nullptr;
  std::vector<std::vector<std::uint64_t>> nodes_of_op;   // by op index within the rank
  std::map<std::pair<int, int>, std::int32_t> next_tag;  // (src, dst) → transfers so far
};

using GroupOfComm = std::map<std::string, const ChakraGroup*>;

void require_every_rank(const StepGraph& g) {
  for (std::size_t i = 0; i < g.ranks.size(); ++i) {
    if (g.ranks[i].rank != static_cast<int>(i)) {
      throw Error("step " + std::to_string(g.step) + " has no ops of rank " + std::to_string(i) +
                  " (ASTRA-sim needs a trace for every rank 0.." +
                  std::to_string(g.ranks.back().rank) + ")");
    }
  }
}

// Communicators: the ranks whose ops name each one, as e.groups; the map points into e.groups,
// so nothing may add a group after it.
GroupOfComm add_groups(const StepGraph& g, ChakraExport& e) {
  std::map<std::string, std::set<int>> members;
  std::map<std::string, int> sizes;
  for (const GraphOp& op : g.ops) {
    if (op.category != Category::kComm || op.comm.empty()) continue;
    members[op.comm].insert(op.rank);
    sizes[op.comm] = std::max(sizes[op.comm], op.comm_size);
  }
  e.groups.reserve(members.size());
  for (const auto& [comm, ranks] : members) {
    ChakraGroup grp;
    grp.id = static_cast<int>(e.groups.size()) + 1;  // 0 and "" mean every rank to ASTRA-sim
    grp.comm = comm;
    grp.comm_size = sizes[comm];
    grp.ranks.assign(ranks.begin(), ranks.end());
    if (static_cast<int>(grp.ranks.size()) != grp.comm_size) {
      e.notes.push_back("communicator " + comm + " has " + std::to_string(grp.comm_size) +
                        " ranks but only " + std::to_string(grp.ranks.size()) +
                        " recorded ops on it in step " + std::to_string(g.step) +
                        ": its group lists those");
    }
    e.groups.push_back(std::move(grp));
  }
  GroupOfComm group_of_comm;
  for (const ChakraGroup& grp : e.groups) group_of_comm[grp.comm] = &grp;
  return group_of_comm;
}

// What every node of an op shares: name, times from the step's start, dependencies on every
// predecessor's nodes (a send/receive op is two or more nodes; those on another stream are the
// recorded waits, repeated as control dependencies), and the attributes every node carries.
ChakraNode base_node(const StepGraph& g, const GraphOp& op, const RankBuild& b,
                     std::int64_t step_start) {
  const GraphRank& gr = g.rank_of(op);
  ChakraNode base;
  base.name = op.name;
  base.start_us = micros(op.start_ns - step_start);
  base.duration_us = micros(op.end_ns - op.start_ns);
  std::set<std::uint64_t> data, ctrl;
  for (const int p : op.preds) {
    const GraphOp& before = g.ops[static_cast<std::size_t>(p)];
    for (const std::uint64_t id : b.nodes_of_op[static_cast<std::size_t>(p - gr.first_op)]) {
      data.insert(id);
      if (before.stream != op.stream) ctrl.insert(id);
    }
  }
  base.data_deps.assign(data.begin(), data.end());
  base.ctrl_deps.assign(ctrl.begin(), ctrl.end());
  base.attrs.push_back(attr_bool("is_cpu_op", false));
  base.attrs.push_back(attr_text("commprof_category", category_name(op.category)));
  return base;
}

// (send, peer) of each transfer of a point-to-point op: the file's send_to and recv_from where
// it has them, else read from the op's name (`group` null when its communicator has none).
std::vector<std::pair<bool, int>> transfer_legs(const StepGraph& g, const GraphOp& op,
                                                const ChakraGroup* group) {
  std::vector<std::pair<bool, int>> legs;
  for (const std::int32_t to : op.send_to) legs.emplace_back(true, to);
  for (const std::int32_t from : op.recv_from) legs.emplace_back(false, from);
  if (!legs.empty()) return legs;
  const std::vector<Transfer> transfers = transfers_of(op.name);
  const bool wants_send = op.collective != "recv", wants_recv = op.collective != "send";
  bool has_send = false, has_recv = false;
  for (const Transfer& t : transfers) (t.send ? has_send : has_recv) = true;
  if (transfers.empty() || has_send != wants_send || has_recv != wants_recv || !group) {
    throw Error("rank " + std::to_string(op.rank) + ", step " + std::to_string(g.step) +
                ": cannot tell the peers of " + op.collective + " op '" + op.name +
                "' (the file records no send_to/recv_from, and its name is not one of "
                "commprof's pipeline transfers: send_act, recv_act, send_grad, recv_grad "
                "on a communicator of pipeline stages in rank order)");
  }
  const std::vector<int>& ring = group->ranks;
  const auto at = std::find(ring.begin(), ring.end(), op.rank) - ring.begin();
  const auto n = static_cast<std::ptrdiff_t>(ring.size());
  for (const Transfer& t : transfers) {
    // Activations go to the next stage and come from the previous one; gradients the
    // other way (interleaved schedules wrap from the last stage to the first).
    const bool to_next = t.send == t.forward;
    legs.emplace_back(t.send, ring[static_cast<std::size_t>((at + (to_next ? 1 : n - 1)) % n)]);
  }
  return legs;
}

void add_transfer_nodes(const StepGraph& g, const GraphOp& op, const ChakraGroup* group,
                        const ChakraNode& base, RankBuild& b, ChakraExport& e,
                        std::vector<ChakraNode>& made) {
  const std::string pg = group ? std::to_string(group->id) : std::string();
  const std::vector<std::pair<bool, int>> legs = transfer_legs(g, op, group);
  const std::uint64_t each = op.bytes / legs.size();
  for (const auto& [send, peer] : legs) {
    const int src = send ? op.rank : peer, dst = send ? peer : op.rank;
    ChakraNode node = base;
    node.name += send ? ".send" : ".recv";
    node.type = send ? chakra::NodeType::kCommSend : chakra::NodeType::kCommRecv;
    node.attrs.push_back(attr_int("comm_src", ChakraAttr::Kind::kInt32, src));
    node.attrs.push_back(attr_int("comm_dst", ChakraAttr::Kind::kInt32, dst));
    node.attrs.push_back(attr_int("comm_tag", ChakraAttr::Kind::kInt32, b.next_tag[{src, dst}]++));
    node.attrs.push_back(
        attr_int("comm_size", ChakraAttr::Kind::kInt64, static_cast<std::int64_t>(each)));
    node.attrs.push_back(attr_text("pg_name", pg));
    ++(send ? e.send_nodes : e.recv_nodes);
    made.push_back(std::move(node));
  }
}

// A collective's size as ASTRA-sim reads comm_size (astra-sim 518bd51, system/collective/Ring.cc):
// an all-gather's is each rank's input, the output over the group's ranks; every other kind's
// is the op's bytes. One size per matched collective, the largest member's: ASTRA-sim cuts it
// into comm_size/n chunks and pairs them by size across ranks, so the unequal sizes of an
// all-to-allv would never pair and no rank would finish.
std::uint64_t coll_comm_size(const StepGraph& g, const GraphOp& op, ChakraExport& e) {
  const bool gather = op.collective == "allgather" || op.collective == "allgatherv";
  auto size_of = [&](const GraphOp& o) {
    return gather && o.comm_size > 1 ? o.bytes / static_cast<std::uint64_t>(o.comm_size) : o.bytes;
  };
  const std::uint64_t own = size_of(op);
  if (op.collective_id < 0) return own;
  std::uint64_t largest = own;
  for (const int m : g.collectives[static_cast<std::size_t>(op.collective_id)].members)
    largest = std::max(largest, size_of(g.ops[static_cast<std::size_t>(m)]));
  if (largest != own) ++e.raised_size;
  return largest;
}

ChakraNode collective_node(const StepGraph& g, const GraphOp& op, const ChakraGroup* group,
                           chakra::CollectiveCommType type, const ChakraDims& dims, ChakraNode node,
                           ChakraExport& e) {
  node.type = chakra::NodeType::kCommColl;
  if (op.collective_id >= 0) {
    node.duration_us = micros(g.collectives[static_cast<std::size_t>(op.collective_id)].time_ns);
  } else {
    ++e.unmatched_coll;
  }
  node.attrs.push_back(
      attr_int("comm_type", ChakraAttr::Kind::kInt64, static_cast<std::int64_t>(type)));
  node.attrs.push_back(attr_int("comm_size", ChakraAttr::Kind::kInt64,
                                static_cast<std::int64_t>(coll_comm_size(g, op, e))));
  if (group) node.attrs.push_back(attr_text("pg_name", std::to_string(group->id)));
  const auto dim = dims.dim_of_kind.find(std::string(group_of(op.comm)));
  if (dims.count > 1 && dim != dims.dim_of_kind.end()) {
    ChakraAttr involved{"involved_dim", ChakraAttr::Kind::kBoolList, 0, {}, {}};
    involved.list.assign(static_cast<std::size_t>(dims.count), false);
    involved.list[static_cast<std::size_t>(dim->second)] = true;
    node.attrs.push_back(std::move(involved));
  }
  ++e.coll_nodes;
  return node;
}

// Compute, the MEM stream, and communication ASTRA-sim has no node for: replayed for their
// measured time.
ChakraNode compute_node(const GraphOp& op, ChakraNode node, ChakraExport& e) {
  node.type = chakra::NodeType::kComp;
  if (op.flops > 0) {
    node.attrs.push_back(attr_int("num_ops", ChakraAttr::Kind::kInt64,
                                  static_cast<std::int64_t>(std::llround(op.flops))));
  }
  if (op.bytes > 0) {
    node.attrs.push_back(
        attr_int("tensor_size", ChakraAttr::Kind::kUint64, static_cast<std::int64_t>(op.bytes)));
  }
  ++(op.category == Category::kComp  ? e.comp_nodes
     : op.category == Category::kMem ? e.mem_as_comp
                                     : e.comm_as_comp);
  return node;
}

}  // namespace

ChakraExport chakra_export(const StepGraph& g, const ChakraDims& dims) {
  ChakraExport e;
  e.step = g.step;
  e.ops_with_waits = g.ops_with_waits;
  require_every_rank(g);
  const GroupOfComm group_of_comm = add_groups(g, e);

  std::int64_t step_start = std::numeric_limits<std::int64_t>::max();
  for (const GraphOp& op : g.ops) step_start = std::min(step_start, op.start_ns);

  e.ranks.resize(g.ranks.size());
  std::vector<RankBuild> builds(g.ranks.size());
  for (std::size_t r = 0; r < g.ranks.size(); ++r) {
    e.ranks[r].rank = static_cast<int>(r);
    builds[r].trace = &e.ranks[r];
    builds[r].nodes_of_op.resize(static_cast<std::size_t>(g.ranks[r].ops));
  }

  for (const int k : emission_order(g)) {
    const GraphOp& op = g.ops[static_cast<std::size_t>(k)];
    RankBuild& b = builds[static_cast<std::size_t>(op.rank)];
    ChakraNode base = base_node(g, op, b, step_start);
    const auto found = group_of_comm.find(op.comm);
    const ChakraGroup* group = found == group_of_comm.end() ? nullptr : found->second;

    std::vector<ChakraNode> made;
    chakra::CollectiveCommType type{};
    if (op.category == Category::kComm && is_point_to_point(op.collective)) {
      add_transfer_nodes(g, op, group, base, b, e, made);
    } else if (op.category == Category::kComm && comm_type_of(op.collective, type)) {
      made.push_back(collective_node(g, op, group, type, dims, std::move(base), e));
    } else {
      made.push_back(compute_node(op, std::move(base), e));
    }
    std::vector<ChakraNode>& nodes = b.trace->nodes;
    std::vector<std::uint64_t>& ids = b.nodes_of_op[static_cast<std::size_t>(op.index)];
    for (ChakraNode& node : made) {
      node.id = nodes.size();
      if (node.duration_us == 0) ++e.zero_us;
      ids.push_back(node.id);
      nodes.push_back(std::move(node));
    }
  }
  if (e.raised_size > 0) {
    e.notes.push_back(std::to_string(e.raised_size) +
                      " collective node(s) carry their collective's largest member's comm_size, "
                      "not their own bytes (all-to-allv sizes differ per rank; ASTRA-sim needs "
                      "one size on every member or never finishes)");
  }
  if (e.unmatched_coll > 0) {
    e.notes.push_back(std::to_string(e.unmatched_coll) +
                      " collective op(s) were not matched across ranks: they carry their own "
                      "duration");
  }
  return e;
}

namespace {

void encode_attr(chakra::ProtoWriter& w, int field, const ChakraAttr& a) {
  namespace at = chakra::attribute;
  chakra::ProtoWriter m;
  m.bytes(at::kName, a.name);
  // A oneof member is written even when zero: that it is set is what a reader checks.
  switch (a.kind) {
    case ChakraAttr::Kind::kBool:
      m.boolean(at::kBoolVal, a.integer != 0);
      break;
    case ChakraAttr::Kind::kInt32:
    case ChakraAttr::Kind::kInt64:
      m.int64(a.kind == ChakraAttr::Kind::kInt32 ? at::kInt32Val : at::kInt64Val, a.integer);
      break;
    case ChakraAttr::Kind::kUint64:
      m.varint(at::kUint64Val, static_cast<std::uint64_t>(a.integer));
      break;
    case ChakraAttr::Kind::kString:
      m.bytes(at::kStringVal, a.text);
      break;
    case ChakraAttr::Kind::kBoolList: {
      chakra::ProtoWriter list;
      std::vector<std::uint64_t> values;
      for (const bool b : a.list) values.push_back(b ? 1 : 0);
      list.packed(at::kListValues, values);
      m.message(at::kBoolList, list);
      break;
    }
  }
  w.message(field, m);
}

}  // namespace

std::string encode_chakra_trace(const ChakraExport& e, const ChakraRankTrace& rank,
                                const std::string& producer) {
  std::string out;
  {
    namespace gm = chakra::global_metadata;
    chakra::ProtoWriter meta;
    meta.bytes(gm::kVersion, "1.0.0");
    encode_attr(meta, gm::kAttr, attr_text("producer", producer));
    encode_attr(meta, gm::kAttr, attr_int("rank", ChakraAttr::Kind::kInt64, rank.rank));
    encode_attr(meta, gm::kAttr,
                attr_int("world_size", ChakraAttr::Kind::kInt64,
                         static_cast<std::int64_t>(e.ranks.size())));
    encode_attr(meta, gm::kAttr, attr_int("commprof_step", ChakraAttr::Kind::kInt64, e.step));
    chakra::append_delimited(out, meta);
  }
  namespace nd = chakra::node;
  for (const ChakraNode& n : rank.nodes) {
    chakra::ProtoWriter w;
    w.varint_if_set(nd::kId, n.id);
    w.bytes(nd::kName, n.name);
    w.varint_if_set(nd::kType, static_cast<std::uint64_t>(n.type));
    w.packed(nd::kCtrlDeps, n.ctrl_deps);
    w.packed(nd::kDataDeps, n.data_deps);
    w.varint_if_set(nd::kStartTimeMicros, n.start_us);
    w.varint_if_set(nd::kDurationMicros, n.duration_us);
    for (const ChakraAttr& a : n.attrs) encode_attr(w, nd::kAttr, a);
    chakra::append_delimited(out, w);
  }
  return out;
}

}  // namespace commprof
