// SPDX-License-Identifier: MIT
#include "workloads/op_plan.hpp"

#include <algorithm>
#include <ostream>

#include "collectives/collective_spec.hpp"

namespace commprof {

const char* group_name(Group g) {
  switch (g) {
    case Group::kNone:
      return "-";
    case Group::kTp:
      return "tp";
    case Group::kDp:
      return "dp";
    case Group::kPp:
      return "pp";
  }
  return "?";
}

int OpPlan::add(PlannedOp op, const std::vector<int>& deps) {
  op.id = static_cast<int>(ops.size());
  int latest[3] = {-1, -1, -1};
  for (int d : deps) {
    if (d < 0) continue;
    const PlannedOp& dep = ops.at(static_cast<std::size_t>(d));
    if (dep.stream == op.stream) continue;
    int& slot = latest[index_of(dep.stream)];
    slot = std::max(slot, d);
  }
  op.deps.clear();
  for (int d : latest) {
    if (d >= 0) op.deps.push_back(d);
  }
  ops.push_back(std::move(op));
  return ops.back().id;
}

int OpPlan::gemm(const std::string& name, int m, int n, int k, const std::vector<int>& deps) {
  PlannedOp op;
  op.name = name;
  op.stream = Category::kComp;
  op.kind = PlannedKind::kGemm;
  op.m = m;
  op.n = n;
  op.k = k;
  op.flops = 2.0 * m * n * k;
  op.bytes = (static_cast<std::uint64_t>(m) * k + static_cast<std::uint64_t>(k) * n +
              static_cast<std::uint64_t>(m) * n) *
             dtype_size(dtype);
  return add(std::move(op), deps);
}

int OpPlan::collective(const std::string& name, CollectiveKind kind, Group group,
                       std::uint64_t count, std::uint64_t bytes, const std::vector<int>& deps) {
  PlannedOp op;
  op.name = name;
  op.stream = Category::kComm;
  op.kind = PlannedKind::kCollective;
  op.collective = kind;
  op.group = group;
  op.count = count;
  op.bytes = bytes;
  return add(std::move(op), deps);
}

int OpPlan::p2p(const std::string& name, Group group, int send_peer, int recv_peer,
                std::uint64_t count, const std::vector<int>& deps) {
  PlannedOp op;
  op.name = name;
  op.stream = Category::kComm;
  op.kind = PlannedKind::kP2P;
  op.group = group;
  op.send_peer = send_peer;
  op.recv_peer = recv_peer;
  op.count = count;
  op.bytes = count * dtype_size(dtype) * ((send_peer >= 0 ? 1 : 0) + (recv_peer >= 0 ? 1 : 0));
  return add(std::move(op), deps);
}

int OpPlan::copy(const std::string& name, CopyKind kind, std::uint64_t bytes,
                 const std::vector<int>& deps) {
  PlannedOp op;
  op.name = name;
  op.stream = Category::kMem;
  op.kind = PlannedKind::kCopy;
  op.copy = kind;
  op.bytes = bytes;
  return add(std::move(op), deps);
}

int OpPlan::axpy(const std::string& name, std::uint64_t count, const std::vector<int>& deps) {
  PlannedOp op;
  op.name = name;
  op.stream = Category::kComp;
  op.kind = PlannedKind::kAxpy;
  op.count = count;
  op.flops = 2.0 * static_cast<double>(count);
  op.bytes = 3 * count * dtype_size(dtype);
  return add(std::move(op), deps);
}

std::vector<const PlannedOp*> OpPlan::of_kind(PlannedKind kind) const {
  std::vector<const PlannedOp*> out;
  for (const PlannedOp& op : ops) {
    if (op.kind == kind) out.push_back(&op);
  }
  return out;
}

OpPlan serialized(const OpPlan& plan) {
  OpPlan out;
  out.dtype = plan.dtype;
  for (const PlannedOp& op : plan.ops) {
    std::vector<int> deps = op.deps;
    if (!out.ops.empty()) deps.push_back(out.ops.back().id);
    out.add(op, deps);
  }
  return out;
}

void print_plan(std::ostream& os, const OpPlan& plan) {
  for (const PlannedOp& op : plan.ops) {
    os << "  " << op.id << "  " << category_name(op.stream) << "  " << op.name;
    switch (op.kind) {
      case PlannedKind::kGemm:
        os << "  gemm " << op.m << "x" << op.n << "x" << op.k << "  " << op.flops / 1e9 << " GFLOP";
        break;
      case PlannedKind::kCollective:
        os << "  " << collective_name(op.collective) << " on " << group_name(op.group) << "  count "
           << op.count << "  " << op.bytes << " B";
        break;
      case PlannedKind::kP2P:
        os << "  p2p on " << group_name(op.group) << "  send->" << op.send_peer << " recv<-"
           << op.recv_peer << "  " << op.count << " elements each way";
        break;
      case PlannedKind::kCopy:
        os << "  copy "
           << (op.copy == CopyKind::kHostToDevice   ? "H2D"
               : op.copy == CopyKind::kDeviceToHost ? "D2H"
                                                    : "D2D")
           << "  " << op.bytes << " B";
        break;
      case PlannedKind::kAxpy:
        os << "  axpy  " << op.count << " elements";
        break;
    }
    if (!op.deps.empty()) {
      os << "  after";
      for (int d : op.deps) os << ' ' << d;
    }
    os << '\n';
  }
}

}  // namespace commprof
