// SPDX-License-Identifier: MIT
#include "workloads/op_plan.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <type_traits>

#include "src/collective/collective_spec.hpp"
#include "src/core/log.hpp"
#include "workloads/model_shape.hpp"

namespace commprof {

const char* group_name(Group g) { return name_of(kGroupNames, g); }

Group PlannedOp::group() const {
  if (const auto* c = std::get_if<PlannedCollective>(&call)) return c->group;
  if (const auto* p = std::get_if<PlannedP2P>(&call)) return p->group;
  return Group::kNone;
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
  return gemm(name, PlannedGemm{m, n, k, false, false}, deps);
}

int OpPlan::gemm(const std::string& name, PlannedGemm shape, const std::vector<int>& deps) {
  const int m = shape.m, n = shape.n, k = shape.k;
  PlannedOp op;
  op.name = name;
  op.stream = Category::kComp;
  op.call = shape;
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
  op.call = PlannedCollective{kind, group, count, nullptr};
  op.bytes = bytes;
  return add(std::move(op), deps);
}

int OpPlan::p2p(const std::string& name, Group group, const std::array<P2PTransfer, 2>& sends,
                const std::array<P2PTransfer, 2>& recvs, std::uint64_t count,
                const std::vector<int>& deps) {
  PlannedOp op;
  op.name = name;
  op.stream = Category::kComm;
  op.call = PlannedP2P{group, sends, recvs, count, nullptr};
  op.bytes = count * dtype_size(dtype) * static_cast<std::uint64_t>(used(sends) + used(recvs));
  return add(std::move(op), deps);
}

int OpPlan::copy(const std::string& name, CopyKind kind, std::uint64_t bytes,
                 const std::vector<int>& deps) {
  PlannedOp op;
  op.name = name;
  op.stream = Category::kMem;
  op.call = PlannedCopy{kind};
  op.bytes = bytes;
  return add(std::move(op), deps);
}

int OpPlan::elementwise(const std::string& name, const PassBytes& bytes,
                        const std::vector<int>& deps) {
  PlannedOp op;
  op.name = name;
  op.stream = Category::kComp;
  op.call = PlannedElementwise{bytes.read,         bytes.write,         bytes.pattern,
                               bytes.pattern_read, bytes.pattern_write, bytes.row_bytes};
  op.bytes = bytes.read + bytes.write;
  return add(std::move(op), deps);
}

int OpPlan::adamw(const std::string& name, std::vector<std::uint64_t> tensors,
                  const std::vector<int>& deps) {
  PlannedOp op;
  op.name = name;
  op.stream = Category::kComp;
  PlannedAdamw call{std::move(tensors)};
  const PassBytes bytes = adamw_bytes(call.parameters(), dtype);
  op.bytes = bytes.read + bytes.write;
  op.call = std::move(call);
  return add(std::move(op), deps);
}

int OpPlan::attention(const std::string& name, const PlannedAttention& call,
                      const std::vector<int>& deps) {
  PlannedOp op;
  op.name = name;
  op.stream = Category::kComp;
  op.call = call;
  op.flops = call.flops();
  // Forward: reads Q, K, V, writes O and the fp32 statistics; backward: reads Q, K, V, O, dO
  // and the statistics, writes dQ, dK, dV. X: one of Q, O, dO, dQ; Y: one of K, V, dK, dV
  // (fewer heads under GQA).
  const std::uint64_t x = call.elements() * dtype_size(dtype);
  const std::uint64_t y = call.kv_elements() * dtype_size(dtype);
  const std::uint64_t stats = static_cast<std::uint64_t>(call.batch) *
                              static_cast<std::uint64_t>(call.heads) *
                              static_cast<std::uint64_t>(call.seq) * 4;
  op.bytes = call.backward ? 4 * x + 4 * y + stats : 2 * x + 2 * y + stats;
  return add(std::move(op), deps);
}

int OpPlan::compute(const std::string& name, std::uint64_t ns, const std::vector<int>& deps) {
  PlannedOp op;
  op.name = name;
  op.stream = Category::kComp;
  op.call = PlannedCompute{ns};
  return add(std::move(op), deps);
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

namespace {

// n·factor rounded, at least 1 (0 stays 0).
template <class T>
T stretched(T n, double factor) {
  if (n == T{0}) return n;
  const double v = std::round(static_cast<double>(n) * factor);
  return v < 1.0 ? T{1} : static_cast<T>(v);
}

// Attention's work grows with its heads; grouped-query attention keeps heads ÷ key/value heads,
// so whole groups are added. One group and one head (a rank's share of a small model): the
// batch instead.
void stretch(PlannedAttention& a, double factor) {
  const int kv = a.kv_heads > 0 ? a.kv_heads : a.heads;
  const int per_group = a.heads / kv;
  const int groups = stretched(kv, factor);
  if (groups != kv || a.batch == stretched(a.batch, factor)) {
    a.heads = groups * per_group;
    if (a.kv_heads > 0) a.kv_heads = groups;
  } else {
    a.batch = stretched(a.batch, factor);
  }
}

}  // namespace

OpPlan slowed(const OpPlan& plan, double factor) {
  OpPlan out = plan;
  for (PlannedOp& op : out.ops) {
    if (op.stream != Category::kComp) continue;
    double achieved = factor;
    std::visit(
        [&](auto& call) {
          using Call = std::decay_t<decltype(call)>;
          if constexpr (std::is_same_v<Call, PlannedGemm>) {
            const int m = stretched(call.m, factor);
            achieved = static_cast<double>(m) / call.m;
            call.m = m;
          } else if constexpr (std::is_same_v<Call, PlannedElementwise>) {
            call.read_bytes = stretched(call.read_bytes, factor);
            call.write_bytes = stretched(call.write_bytes, factor);
            call.pattern_read = std::min(stretched(call.pattern_read, factor), call.read_bytes);
            call.pattern_write = std::min(stretched(call.pattern_write, factor), call.write_bytes);
          } else if constexpr (std::is_same_v<Call, PlannedCompute>) {
            call.ns = stretched(call.ns, factor);
          } else if constexpr (std::is_same_v<Call, PlannedAdamw>) {
            const double before = static_cast<double>(call.parameters());
            for (std::uint64_t& t : call.tensors) t = stretched(t, factor);
            if (before > 0) achieved = static_cast<double>(call.parameters()) / before;
          } else if constexpr (std::is_same_v<Call, PlannedAttention>) {
            const double before = static_cast<double>(call.batch) * call.heads;
            stretch(call, factor);
            achieved = static_cast<double>(call.batch) * call.heads / before;
          }
        },
        op.call);
    op.flops *= achieved;
    op.bytes = stretched(op.bytes, achieved);
  }
  return out;
}

PlannedAttention layer_attention(const ModelShape& shape, int tp, bool backward) {
  PlannedAttention a;
  a.backward = backward;
  a.batch = shape.micro_batch;
  a.heads = shape.heads / tp;
  a.kv_heads = shape.key_value_heads() / tp;
  a.seq = shape.seq;
  a.head_dim = shape.head_dim();
  a.causal = true;
  return a;
}

std::string kv_heads_note(const AttentionShape& a) {
  if (a.key_value_heads() == a.heads) return "";
  return log::cat(" sharing ", a.key_value_heads(), " key/value heads");
}

void print_plan(std::ostream& os, const OpPlan& plan) {
  for (const PlannedOp& op : plan.ops) {
    os << "  " << op.id << "  " << category_name(op.stream) << "  " << op.name;
    if (op.host_gap_ns > 0) {
      os << "  (host gap " << static_cast<double>(op.host_gap_ns) / 1e3 << " us before)";
    }
    std::visit(
        [&os, &op, &plan](const auto& call) {
          using Call = std::decay_t<decltype(call)>;
          if constexpr (std::is_same_v<Call, PlannedGemm>) {
            os << "  gemm " << call.m << "x" << call.n << "x" << call.k;
            if (call.trans_a || call.trans_b)
              os << " " << (call.trans_a ? 'T' : 'N') << (call.trans_b ? 'T' : 'N');
            os << "  " << op.flops / 1e9 << " GFLOP";
          } else if constexpr (std::is_same_v<Call, PlannedCollective>) {
            os << "  " << collective_name(call.kind) << " on " << group_name(call.group)
               << "  count " << call.count << "  " << op.bytes << " B";
            if (call.splits) {
              os << "  send";
              for (std::size_t n : call.splits->send_counts) os << ' ' << n;
              os << "  recv";
              for (std::size_t n : call.splits->recv_counts) os << ' ' << n;
            }
          } else if constexpr (std::is_same_v<Call, PlannedP2P>) {
            os << "  p2p on " << group_name(call.group);
            for (const P2PTransfer& t : call.sends) {
              if (t.peer >= 0) os << "  send " << (t.forward ? "act" : "grad") << "->" << t.peer;
            }
            for (const P2PTransfer& t : call.recvs) {
              if (t.peer >= 0) os << "  recv " << (t.forward ? "act" : "grad") << "<-" << t.peer;
            }
            os << "  " << call.count << " elements each";
          } else if constexpr (std::is_same_v<Call, PlannedCopy>) {
            os << "  copy "
               << (call.kind == CopyKind::kHostToDevice   ? "H2D"
                   : call.kind == CopyKind::kDeviceToHost ? "D2H"
                                                          : "D2D")
               << "  " << op.bytes << " B";
          } else if constexpr (std::is_same_v<Call, PlannedElementwise>) {
            os << "  pass  read " << call.read_bytes << " B, write " << call.write_bytes << " B";
            if (call.pattern != AccessPattern::kStream) {
              os << " (" << access_pattern_name(call.pattern) << ": read " << call.pattern_read
                 << " B, write " << call.pattern_write << " B";
              if (call.row_bytes > 0) os << ", rows of " << call.row_bytes << " B";
              os << ")";
            }
          } else if constexpr (std::is_same_v<Call, PlannedAdamw>) {
            const PassBytes bytes = adamw_bytes(call.parameters(), plan.dtype);
            os << "  adamw  " << call.tensors.size() << " tensors, " << call.parameters()
               << " parameters: read " << bytes.read << " B, write " << bytes.write << " B";
          } else if constexpr (std::is_same_v<Call, PlannedAttention>) {
            os << "  attention " << (call.backward ? "bwd" : "fwd") << "  batch " << call.batch
               << ", " << call.heads << " heads" << kv_heads_note(call) << ", seq " << call.seq
               << (call.kv_seq > 0 && call.kv_seq != call.seq ? log::cat(", kv seq ", call.kv_seq)
                                                              : std::string())
               << ", head dim " << call.head_dim << (call.causal ? ", causal  " : "  ")
               << op.flops / 1e9 << " GFLOP, " << op.bytes << " B";
          } else {
            static_assert(std::is_same_v<Call, PlannedCompute>, "every planned call is printed");
            os << "  compute " << static_cast<double>(call.ns) / 1e3 << " us";
          }
        },
        op.call);
    if (!op.deps.empty()) {
      os << "  after";
      for (int d : op.deps) os << ' ' << d;
    }
    if (op.host_waits) os << "  (the host waits for it)";
    os << '\n';
  }
}

}  // namespace commprof
