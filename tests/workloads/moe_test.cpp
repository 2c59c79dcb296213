// SPDX-License-Identifier: MIT
// Mixtures of experts: the dispatch's bytes by hand, the splits every rank agrees on, capacity
// and drops, the presets' parameters, and the plan of an MoE layer.
#include "workloads/moe.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "support/temp_dir.hpp"
#include "workloads/layout.hpp"
#include "workloads/model_parameters.hpp"
#include "workloads/workload.hpp"

namespace commprof {
namespace {

std::uint64_t sum(const std::vector<std::size_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::uint64_t{0});
}

RoutingSpec uniform() { return parse_routing("uniform"); }

// Mixtral 8x7B on EP 8, a micro-batch of 4096 tokens, uniform routing: each rank's 4096 × 2
// routed copies split evenly, 1024 rows to each rank's one expert, each row h = 4096 bf16
// (8192 B): 4 Mi elements (8 MiB) to every peer, 64 MiB in all, as much received.
TEST(Moe, MixtralDispatchBytesByHand) {
  const ModelShape s = model_preset("mixtral-8x7b");
  const Routing routing(uniform(), s.experts);
  for (int rank : {0, 5}) {
    const MoeDispatch d = moe_dispatch(s, routing, 3, 8, rank, 4096);
    ASSERT_EQ(d.dispatch->send_counts.size(), 8U);
    for (std::size_t p = 0; p < 8; ++p) {
      EXPECT_EQ(d.dispatch->send_counts[p], 1024U * 4096U);
      EXPECT_EQ(d.dispatch->recv_counts[p], 1024U * 4096U);
      EXPECT_EQ(d.dispatch->send_displs[p], p * 1024U * 4096U);
    }
    EXPECT_EQ(d.send_elements, 8U * 1024U * 4096U);
    EXPECT_EQ(d.send_elements * 2, 67108864U);  // bytes
    EXPECT_EQ(d.expert_rows, std::vector<std::uint64_t>{8192});
    EXPECT_DOUBLE_EQ(d.imbalance, 1.0);
  }
}

// The DeepSeek-like preset: top-8 of 256 experts, EP 8 (32 experts a rank), 4096 tokens: 32768
// copies per rank, 128 per expert, so 32 × 128 = 4096 rows of h = 7168 to every peer; each local
// expert computes 128 rows from each of the 8 ranks.
TEST(Moe, DeepSeekLikeDispatchBytesByHand) {
  const ModelShape s = model_preset("deepseek-v3-gqa");
  EXPECT_EQ(s.experts, 256);
  EXPECT_EQ(s.top_k, 8);
  EXPECT_EQ(s.dense_layers, 3);
  EXPECT_FALSE(s.moe_layer(2));
  EXPECT_TRUE(s.moe_layer(3));
  const Routing routing(uniform(), s.experts);
  const MoeDispatch d = moe_dispatch(s, routing, 3, 8, 2, 4096);
  for (std::size_t p = 0; p < 8; ++p) EXPECT_EQ(d.dispatch->send_counts[p], 4096U * 7168U);
  EXPECT_EQ(sum(d.dispatch->send_counts) * 2, 469762048U);  // bytes: 32768 rows of 14336 B
  ASSERT_EQ(d.expert_rows.size(), 32U);
  for (std::uint64_t rows : d.expert_rows) EXPECT_EQ(rows, 1024U);
}

// Skewed routing: what rank r sends p is what p receives from r, the combine is the dispatch
// reversed, and each rank's experts compute what it receives.
TEST(Moe, EveryRanksSplitsAgreeWithItsPeers) {
  const ModelShape s = model_preset("tiny-moe");
  const Routing routing(parse_routing("zipf:1.0"), s.experts);
  const int ep = 4;
  std::vector<MoeDispatch> d;
  for (int r = 0; r < ep; ++r) d.push_back(moe_dispatch(s, routing, 2, ep, r, 64));
  double most = 0, all = 0;
  for (int r = 0; r < ep; ++r) {
    const auto i = static_cast<std::size_t>(r);
    for (int p = 0; p < ep; ++p) {
      const auto j = static_cast<std::size_t>(p);
      EXPECT_EQ(d[i].dispatch->send_counts[j], d[j].dispatch->recv_counts[i]);
    }
    EXPECT_EQ(d[i].combine->send_counts, d[i].dispatch->recv_counts);
    EXPECT_EQ(d[i].combine->recv_counts, d[i].dispatch->send_counts);
    EXPECT_EQ(sum(d[i].dispatch->send_counts), 64U * 2U * 128U);  // T·K rows of h
    const std::uint64_t rows =
        std::accumulate(d[i].expert_rows.begin(), d[i].expert_rows.end(), std::uint64_t{0});
    EXPECT_EQ(rows * 128U, d[i].recv_elements);
    most = std::max(most, static_cast<double>(d[i].recv_elements));
    all += static_cast<double>(d[i].recv_elements);
  }
  EXPECT_GT(d[0].imbalance, 1.0);  // zipf 1.0 over 8 experts is skewed
  EXPECT_DOUBLE_EQ(d[0].imbalance, most * ep / all);
  EXPECT_THROW(moe_dispatch(s, routing, 2, 3, 0, 64), ConfigError);  // 3 does not divide 8
}

// A capacity factor: every (rank, expert) pair sends ⌈C · T·K/E⌉ rows, padded or cut; what a
// rank routed over it is dropped, counted against the routing itself.
TEST(Moe, CapacityFactorFixesTheSizesAndCountsTheDrops) {
  ModelShape s = model_preset("mixtral-8x7b");
  s.capacity_factor = 1.0;
  const Routing routing(parse_routing("zipf:1.0"), s.experts);
  const MoeDispatch d = moe_dispatch(s, routing, 0, 8, 1, 4096);
  EXPECT_EQ(d.capacity, 1024U);  // 1.0 × 4096·2/8
  for (std::size_t p = 0; p < 8; ++p) {
    EXPECT_EQ(d.dispatch->send_counts[p], 1024U * 4096U);
    EXPECT_EQ(d.dispatch->recv_counts[p], 1024U * 4096U);
  }
  std::uint64_t over = 0;
  for (std::uint64_t c : routing.expert_counts(4096, 2, 0, 0, 1)) over += c > 1024 ? c - 1024 : 0;
  EXPECT_EQ(d.dropped, over);
  EXPECT_GT(d.dropped, 0U);
}

// A routing file of one layer with these counts (docs/collectives.md's format), removed at the end.
class FileRouting {
 public:
  FileRouting(const std::string& counts, int experts)
      : path_(test::own_temp_path("moe_routing.txt")) {
    std::ofstream(path_) << "layer 0: " << counts << "\n";
    routing_ = std::make_unique<Routing>(parse_routing("file:" + path_), experts);
  }
  ~FileRouting() { std::remove(path_.c_str()); }
  const Routing& operator*() const { return *routing_; }

 private:
  std::string path_;
  std::unique_ptr<Routing> routing_;
};

// 4 experts, top-1, rows of h = 2 elements, 8 tokens per rank, EP 2 (experts 0-1 on EP rank 0).
// The file's 5 1 1 1 is exactly 8 tokens: every source rank routes 5 rows to expert 0 and one to
// each other. Dropless, EP rank 0 sends itself 5 + 1 = 6 rows (12 elements) and EP rank 1 2 (4),
// receives 6 from each source, computes 2 × 5 = 10 rows on expert 0 and 2 on expert 1, and the EP
// ranks receive 12 and 4 rows: max/mean 12 / 8 = 1.5. At capacity factor 1 every (source,
// expert) pair is ⌈1 × 8 / 4⌉ = 2 rows, expert 0's 5 cut to 2 (3 dropped): 4 rows (8 elements)
// to each EP rank; at 1.5, ⌈3⌉ = 3 rows, 2 dropped, 6 rows (12 elements) to each.
TEST(Moe, CapacityAndDropsFromAFileRoutingByHand) {
  ModelShape s = model_preset("tiny-moe");
  s.experts = 4;
  s.top_k = 1;
  s.hidden = 2;
  const FileRouting routing("5 1 1 1", 4);
  s.capacity_factor = 0;
  const MoeDispatch free = moe_dispatch(s, *routing, 0, 2, 0, 8);
  EXPECT_EQ(free.capacity, 0U);
  EXPECT_EQ(free.dropped, 0U);
  EXPECT_EQ(free.dispatch->send_counts, (std::vector<std::size_t>{12, 4}));
  EXPECT_EQ(free.dispatch->recv_counts, (std::vector<std::size_t>{12, 12}));
  EXPECT_EQ(free.expert_rows, (std::vector<std::uint64_t>{10, 2}));
  EXPECT_DOUBLE_EQ(free.imbalance, 1.5);
  s.capacity_factor = 1.0;
  const MoeDispatch cut = moe_dispatch(s, *routing, 0, 2, 0, 8);
  EXPECT_EQ(cut.capacity, 2U);
  EXPECT_EQ(cut.dropped, 3U);
  EXPECT_EQ(cut.dispatch->send_counts, (std::vector<std::size_t>{8, 8}));
  EXPECT_EQ(cut.dispatch->recv_counts, (std::vector<std::size_t>{8, 8}));
  EXPECT_EQ(cut.expert_rows, (std::vector<std::uint64_t>{4, 4}));
  EXPECT_DOUBLE_EQ(cut.imbalance, 1.0);
  s.capacity_factor = 1.5;
  const MoeDispatch half = moe_dispatch(s, *routing, 0, 2, 0, 8);
  EXPECT_EQ(half.capacity, 3U);
  EXPECT_EQ(half.dropped, 2U);
  EXPECT_EQ(half.dispatch->send_counts, (std::vector<std::size_t>{12, 12}));
}

// Expert TP 2 × EP 2 (sources: etp rank a of EP rank e is a + 2e), 4 experts, top-1, h = 2, 6
// tokens per source, the file's equal counts 1 1 1 1: each expert 1.5, so 1 each and the 2 left
// to the experts first from offset (source × (6 mod 4)) mod 4 (the routing's rule for ties):
// sources 0 and 2 route 2 2 1 1, sources 1 and 3 route 1 1 2 2. EP rank 0 (experts 0-1): its etp
// rank 0 receives from sources 0 and 2, 4 + 4 = 8 rows, its etp rank 1 from 1 and 3, 2 + 2 = 4:
// gathered 12 rows (24 elements); EP rank 1 the other way round, 4 and 8.
TEST(Moe, ExpertTensorParallelRowsFromAFileRoutingByHand) {
  ModelShape s = model_preset("tiny-moe");
  s.experts = 4;
  s.top_k = 1;
  s.hidden = 2;
  s.capacity_factor = 0;
  const FileRouting routing("1 1 1 1", 4);
  for (int etp_rank : {0, 1}) {
    const MoeDispatch d0 = moe_dispatch(s, *routing, 0, 2, 0, 6, 0, 2, etp_rank);
    EXPECT_EQ(d0.etp_rows, (std::vector<std::uint64_t>{8, 4})) << "etp rank " << etp_rank;
    EXPECT_EQ(d0.gathered_elements, 24U);
    EXPECT_EQ(d0.expert_rows, (std::vector<std::uint64_t>{6, 6}));
    const MoeDispatch d1 = moe_dispatch(s, *routing, 0, 2, 1, 6, 0, 2, etp_rank);
    EXPECT_EQ(d1.etp_rows, (std::vector<std::uint64_t>{4, 8})) << "etp rank " << etp_rank;
  }
}

// Mixtral 8x7B has 46,702,792,704 parameters (its model card): 32 layers of attention, a router
// of 8 × 4096 and 8 experts of 3 × 4096 × 14336, the embedding and untied head of 32,000 rows.
TEST(Moe, MixtralParametersAreThePublishedCount) {
  EXPECT_EQ(model_parameters(model_preset("mixtral-8x7b"), 1), 46702792704ULL);
}

const PlannedOp* find(const OpPlan& plan, const std::string& name) {
  for (const PlannedOp& op : plan.ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

// tiny-moe on dp 4 with EP 2 (expert DP 2): its first layer dense, the others MoE with the
// dispatcher's ops in order; the routing counts read on the host; the experts' gradients summed
// over expert DP in buckets holding exactly the local experts' parameters.
TEST(Moe, PlanOfAnMoeLayer) {
  WorkloadConfig c;
  c.kind = WorkloadKind::kDp;
  c.shape = model_preset("tiny-moe");
  c.layout.dp = 4;
  c.layout.ep = 2;
  c.layout.etp = 1;
  validate_workload(c);
  const RankPlace place = place_rank(c.layout, 3);
  const OpPlan plan = build_plan(c, place);
  EXPECT_NE(find(plan, "l0.ffn_up.mb0.fwd"), nullptr);  // dense
  EXPECT_EQ(find(plan, "l1.ffn_up.mb0.fwd"), nullptr);
  const std::vector<std::string> order = {"l1.ln2.mb0.fwd",
                                          "l1.router.mb0.fwd",
                                          "l1.topk.mb0.fwd",
                                          "l1.routing_counts.mb0.ag",
                                          "l1.routing_counts.mb0.d2h",
                                          "l1.permute.mb0.fwd",
                                          "l1.dispatch.mb0",
                                          "l1.combine.mb0",
                                          "l1.unpermute_probs.mb0.fwd",
                                          "l1.unpermute.mb0.fwd",
                                          "l1.residual2.mb0.fwd"};
  int previous = -1;
  for (const std::string& name : order) {
    const PlannedOp* op = find(plan, name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_GT(op->id, previous) << name;
    previous = op->id;
  }
  EXPECT_TRUE(find(plan, "l1.routing_counts.mb0.d2h")->host_waits);
  EXPECT_EQ(find(plan, "l1.routing_counts.mb0.ag")->group(), Group::kTpEp);
  const PlannedOp* dispatch = find(plan, "l1.dispatch.mb0");
  EXPECT_EQ(dispatch->group(), Group::kEp);
  const auto& call = dispatch->as<PlannedCollective>();
  ASSERT_NE(call.splits, nullptr);
  EXPECT_EQ(sum(call.splits->send_counts), call.count);
  // Rank 3 is EP rank 1: experts 4..7, each its up, activation and down where rows reached it.
  EXPECT_EQ(place.ep_rank, 1);
  EXPECT_NE(find(plan, "l1.expert4.up.mb0.fwd"), nullptr);
  EXPECT_EQ(find(plan, "l1.expert0.up.mb0.fwd"), nullptr);
  std::uint64_t expert_bytes = 0;
  for (const PlannedOp& op : plan.ops) {
    if (op.name.rfind("edp.bucket", 0) == 0 && op.is<PlannedCollective>()) {
      EXPECT_EQ(op.group(), Group::kEdp) << op.name;
      expert_bytes += op.bytes;
    }
  }
  // 3 MoE layers x 4 local experts x (up 128 x 512 + down 256 x 128) floats.
  EXPECT_EQ(expert_bytes, 3U * 4U * (128U * 512U + 256U * 128U) * 4U);
}

// Mixtral's memory-bound MoE ops on 4096 tokens, top-2 (R = 4096 · 2 · 4096 · 2 B routed rows),
// as Megatron-Core's unfused permute and unpermute and PyTorch's autograd of them run: the
// scatter-adds of index_add_ / scatter_add_ (the unpermutation, the permutation's gradient) add
// R into the token rows with atomics, after zeros; the products with the probabilities (a
// broadcast) run unvectorised; an expert's SwiGLU reads the halves of its up GEMM's rows.
TEST(Moe, MixtralPermutationPassesByHand) {
  const ModelShape s = model_preset("mixtral-8x7b");
  const std::uint64_t t = 4096, row = 4096 * 2, r = t * 2 * row;
  const MoePasses p = moe_passes(s, t);
  for (const PassBytes& scatter : {p.permute_bwd, p.unpermute_fwd}) {
    EXPECT_EQ(scatter.read, r + 8 * t * 2);
    EXPECT_EQ(scatter.write, 2 * t * row);  // the zeros, then the sums
    EXPECT_EQ(scatter.pattern, AccessPattern::kScatterAdd);
    EXPECT_EQ(scatter.pattern_read, r);
    EXPECT_EQ(scatter.pattern_write, t * row);
    EXPECT_EQ(scatter.row_bytes, row);
  }
  EXPECT_EQ(p.permute_fwd.pattern, AccessPattern::kStream);  // a gather of whole rows
  EXPECT_EQ(p.unpermute_bwd.pattern, AccessPattern::kStream);
  EXPECT_EQ(p.unpermute_probs_fwd.pattern, AccessPattern::kStrided);
  EXPECT_EQ(p.unpermute_probs_fwd.pattern_read, r);
  EXPECT_EQ(p.unpermute_probs_fwd.pattern_write, r);
  EXPECT_EQ(p.unpermute_probs_fwd.row_bytes, 0u);  // a broadcast, no chunk halves
  EXPECT_EQ(p.unpermute_probs_bwd.read, 4 * r + 2 * t * 2);
  EXPECT_EQ(p.unpermute_probs_bwd.write, 2 * r + 2 * t * 2);
  EXPECT_EQ(p.unpermute_probs_bwd.pattern_write, r);
  // 1024 rows of one expert: F = 14336 over the halves of rows of 2F.
  const std::uint64_t f = 1024ull * 14336 * 2;
  const PassBytes act = expert_act_fwd(s, 1024, 1);
  EXPECT_EQ(act.read, 3 * f);
  EXPECT_EQ(act.pattern, AccessPattern::kStrided);
  EXPECT_EQ(act.pattern_read, 3 * f);
  EXPECT_EQ(act.row_bytes, 14336u * 2);
  EXPECT_EQ(expert_act_bwd(s, 1024, 2).row_bytes, 7168u * 2);  // expert TP halves F
}

// Each training step routes anew (the Zipf routing's per-step factors): the default routing's
// splits and the experts' rows move from step to step, every rank agreeing on them (what rank 0
// sends rank 1 at a step is what rank 1 receives from rank 0 at that step), and a step's plan is
// the same however often it is built. Uniform routing is the same every step.
TEST(Moe, LoadsMoveBetweenSteps) {
  WorkloadConfig c;
  c.kind = WorkloadKind::kDp;
  c.shape = model_preset("tiny-moe");
  c.layout.dp = 2;
  c.layout.ep = 2;
  c.layout.etp = 1;
  validate_workload(c);
  EXPECT_TRUE(plan_moves_between_steps(c));
  const RankPlace r0 = place_rank(c.layout, 0), r1 = place_rank(c.layout, 1);
  auto splits = [&](const RankPlace& place, std::uint64_t step, int layer) {
    const OpPlan plan = build_plan(c, place, step);
    const PlannedOp* op = find(plan, "l" + std::to_string(layer) + ".dispatch.mb0");
    EXPECT_NE(op, nullptr);
    return *op->as<PlannedCollective>().splits;
  };
  int moved = 0;
  for (int layer = 1; layer < c.shape.layers; ++layer) {
    for (std::uint64_t step = 0; step < 4; ++step) {
      const PeerSplits a = splits(r0, step, layer), b = splits(r1, step, layer);
      EXPECT_EQ(a.send_counts[1], b.recv_counts[0]) << "layer " << layer << " step " << step;
      EXPECT_EQ(b.send_counts[0], a.recv_counts[1]) << "layer " << layer << " step " << step;
      EXPECT_EQ(splits(r0, step, layer).recv_counts, a.recv_counts) << "built twice";
      if (step > 0 && splits(r0, step - 1, layer).recv_counts != a.recv_counts) ++moved;
    }
  }
  EXPECT_GT(moved, 0) << "the default routing gave every step the same loads";
  // The experts' rows follow the dispatch: the bytes of each local expert's activation (exact
  // rows, where the GEMMs round them up to 8) change too.
  auto expert_bytes = [&](std::uint64_t step) {
    std::vector<std::uint64_t> out;
    for (const PlannedOp& op : build_plan(c, r0, step).ops) {
      if (op.name.find(".act.mb0.fwd") != std::string::npos &&
          op.name.find("expert") != op.name.npos)
        out.push_back(op.as<PlannedElementwise>().read_bytes);
    }
    return out;
  };
  EXPECT_FALSE(expert_bytes(0).empty());
  EXPECT_NE(expert_bytes(0), expert_bytes(1));

  c.routing = uniform();
  for (std::uint64_t step = 1; step < 4; ++step) {
    EXPECT_EQ(splits(r0, step, 2).recv_counts, splits(r0, 0, 2).recv_counts) << step;
  }
}

// ZeRO with experts (--dp-mode zero): tiny-moe on dp 4 with EP 2 (expert DP 2), float. Each MoE
// layer's dense parameters (two RMSNorm weights 2 x 128, qkv 384 x 128, out_proj 128 x 128,
// router 8 x 128: 66,816) are sharded over DP (16,704 a rank, 267,264 B gathered); its 4 local
// experts' (each up 512 x 128 and down 128 x 256: 393,216) over expert DP (196,608 a rank,
// 1,572,864 B gathered), each gathered before the layer and reduce-scattered after its last
// backward over its own group; the experts' GEMMs wait for their gather, and the optimizer steps
// both shards.
TEST(Moe, ZeroShardsTheExpertsOverExpertDp) {
  WorkloadConfig c;
  c.kind = WorkloadKind::kDp;
  c.shape = model_preset("tiny-moe");
  c.layout.dp = 4;
  c.layout.ep = 2;
  c.layout.etp = 1;
  c.dp_mode = DpMode::kZero;
  validate_workload(c);
  ASSERT_EQ(c.layout.expert_dp(), 2);
  const OpPlan plan = build_plan(c, place_rank(c.layout, 3));
  auto collective = [&](const std::string& name, Group group, std::uint64_t count,
                        std::uint64_t bytes) {
    const PlannedOp* op = find(plan, name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_EQ(op->group(), group) << name;
    EXPECT_EQ(op->as<PlannedCollective>().count, count) << name;
    EXPECT_EQ(op->bytes, bytes) << name;
  };
  collective("l1.zero.fwd.ag.mb0", Group::kDp, 16704, 267264);
  collective("l1.experts.zero.fwd.ag.mb1", Group::kEdp, 196608, 1572864);
  collective("l3.experts.zero.bwd.ag.mb0", Group::kEdp, 196608, 1572864);
  collective("l2.zero.grad.rs", Group::kDp, 16704, 267264);
  collective("l2.experts.zero.grad.rs", Group::kEdp, 196608, 1572864);
  EXPECT_EQ(find(plan, "l0.experts.zero.fwd.ag.mb0"), nullptr);  // layer 0 is dense
  EXPECT_EQ(find(plan, "edp.bucket0.allreduce"), nullptr);       // no DDP buckets under ZeRO
  const int gather = find(plan, "l1.experts.zero.fwd.ag.mb0")->id;
  bool waits = false;
  for (const PlannedOp& op : plan.ops) {
    if (op.name.rfind("l1.expert", 0) == 0 && op.name.find(".up.mb0.fwd") != std::string::npos) {
      waits = waits || std::find(op.deps.begin(), op.deps.end(), gather) != op.deps.end();
    }
  }
  EXPECT_TRUE(waits) << "the experts' GEMMs ran before their parameters were gathered";
  const auto& tensors = find(plan, "optimizer.adamw")->as<PlannedAdamw>().tensors;
  EXPECT_EQ(std::count(tensors.begin(), tensors.end(), std::uint64_t{16704}), 3);
  EXPECT_EQ(std::count(tensors.begin(), tensors.end(), std::uint64_t{196608}), 3);
}

// Mixtral 8x7B (2 layers, uniform routing) on 4 ranks, tp 2 x dp 2 with expert TP 2 x EP 2
// folded onto them (Megatron-Core's alltoall dispatcher), by hand: each rank routes its
// 4096 / tp = 2048 tokens (sequence parallel) x top-2 = 4096 rows, 512 to each of the 8 experts.
// EP rank e (experts 4e..4e+3) receives 4 x 512 = 2048 rows from each of the 2 ranks of its EP
// group: 4096 rows, 4096 x 4096 = 16 Mi elements. Its 2 expert-TP ranks all-gather those
// (allgatherv over etp, sizes 16 Mi and 16 Mi elements: S = 8192 rows x 8192 B = 64 MiB). Each
// local expert then runs on the 512 rows each of the 4 sources (2 ETP x 2 EP ranks) sent it,
// 2048 rows, with its FFN halved (up 14336 x 2 / 2 = 14336 columns, down 7168); after them the
// reduce-scatter with the same sizes, then the combine. The backward mirrors it: the all-gather
// after the combine's backward, the reduce-scatter before the dispatch's.
TEST(Moe, MixtralExpertTensorParallelBytesByHand) {
  WorkloadConfig c;
  c.kind = WorkloadKind::kHybrid;
  c.shape = model_preset("mixtral-8x7b");
  c.shape.layers = 2;
  c.shape.vocab = 0;
  c.routing = uniform();
  c.layout.tp = 2;
  c.layout.dp = 2;
  c.layout.ep = 2;
  c.layout.etp = 2;
  c.sequence_parallel = true;
  validate_workload(c);
  ASSERT_EQ(c.layout.expert_dp(), 1);
  ASSERT_EQ(c.shape.seq * c.shape.micro_batch, 4096);
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const RankPlace place = place_rank(c.layout, rank);
    const OpPlan plan = build_plan(c, place);
    const std::size_t share = 4096U * 4096U;  // elements each expert-TP rank received
    const PlannedOp* gather = find(plan, "l0.etp_gather.mb0");
    ASSERT_NE(gather, nullptr);
    EXPECT_EQ(gather->group(), Group::kEtp);
    const auto& g = gather->as<PlannedCollective>();
    EXPECT_EQ(g.kind, CollectiveKind::kAllGatherV);
    EXPECT_EQ(g.count, share);
    EXPECT_EQ(gather->bytes, 8192U * 4096U * 2U);  // 64 MiB: both ranks' rows, bf16
    ASSERT_NE(g.splits, nullptr);
    EXPECT_EQ(g.splits->recv_counts, (std::vector<std::size_t>{share, share}));
    EXPECT_EQ(g.splits->recv_displs, (std::vector<std::size_t>{0, share}));
    const PlannedOp* scatter = find(plan, "l0.etp_scatter.mb0");
    ASSERT_NE(scatter, nullptr);
    const auto& r = scatter->as<PlannedCollective>();
    EXPECT_EQ(r.kind, CollectiveKind::kReduceScatterV);
    EXPECT_EQ(r.count, share);
    EXPECT_EQ(scatter->bytes, gather->bytes);
    EXPECT_EQ(r.splits->send_counts, (std::vector<std::size_t>{share, share}));
    const int expert = 4 * place.ep_rank;
    const PlannedOp* up = find(plan, "l0.expert" + std::to_string(expert) + ".up.mb0.fwd");
    ASSERT_NE(up, nullptr);
    EXPECT_EQ(up->as<PlannedGemm>().m, 2048);
    EXPECT_EQ(up->as<PlannedGemm>().n, 14336);
    const PlannedOp* down = find(plan, "l0.expert" + std::to_string(expert) + ".down.mb0.fwd");
    ASSERT_NE(down, nullptr);
    EXPECT_EQ(down->as<PlannedGemm>().k, 7168);
    // The order of Megatron-Core's dispatcher, forward and backward.
    const std::vector<std::string> order = {"l0.dispatch.mb0",       "l0.etp_gather.mb0",
                                            "l0.etp_scatter.mb0",    "l0.combine.mb0",
                                            "l0.combine.bwd.mb0",    "l0.etp_scatter.bwd.mb0",
                                            "l0.etp_gather.bwd.mb0", "l0.dispatch.bwd.mb0"};
    int previous = -1;
    for (const std::string& name : order) {
      const PlannedOp* op = find(plan, name);
      ASSERT_NE(op, nullptr) << name;
      EXPECT_GT(op->id, previous) << name;
      previous = op->id;
    }
    EXPECT_EQ(find(plan, "l0.etp_scatter.bwd.mb0")->as<PlannedCollective>().kind,
              CollectiveKind::kAllGatherV);
    EXPECT_EQ(find(plan, "l0.etp_gather.bwd.mb0")->as<PlannedCollective>().kind,
              CollectiveKind::kReduceScatterV);
  }
}

// tiny-moe with its Zipf routing on tp 2 x dp 2, expert TP 2 x EP 2: the gather's sizes are the
// rows each expert-TP rank received, recomputed here from the routing (source of the rank at
// expert-TP rank a, EP rank e: a + 2e), the same on both ranks of a group, and unequal in some
// layer; the scatter takes the same sizes. With a capacity factor every rank's rows are the
// capacity's: the even all-gather and reduce-scatter.
TEST(Moe, ExpertTensorParallelGatherSizesFromTheRouting) {
  WorkloadConfig c;
  c.kind = WorkloadKind::kHybrid;
  c.shape = model_preset("tiny-moe");
  c.layout.tp = 2;
  c.layout.dp = 2;
  c.layout.ep = 2;
  c.layout.etp = 2;
  c.sequence_parallel = true;
  validate_workload(c);
  const Routing routing(c.routing, c.shape.experts);
  const std::uint64_t tokens = moe_tokens(c);
  const auto h = static_cast<std::size_t>(c.shape.hidden);
  int uneven = 0;
  for (int rank = 0; rank < 4; ++rank) {
    const RankPlace place = place_rank(c.layout, rank);
    const OpPlan plan = build_plan(c, place);
    for (int layer = c.shape.dense_layers; layer < c.shape.layers; ++layer) {
      std::vector<std::size_t> expected;
      for (int a = 0; a < 2; ++a) {
        std::size_t rows = 0;
        for (int e = 0; e < 2; ++e) {
          const auto counts = routing.expert_counts(tokens, c.shape.top_k, 0, layer, a + 2 * e);
          for (int x = 4 * place.ep_rank; x < 4 * place.ep_rank + 4; ++x) {
            rows += counts[static_cast<std::size_t>(x)];
          }
        }
        expected.push_back(rows * h);
      }
      uneven += expected[0] != expected[1] ? 1 : 0;
      const std::string l = "l" + std::to_string(layer);
      const PlannedOp* gather = find(plan, l + ".etp_gather.mb0");
      ASSERT_NE(gather, nullptr);
      const auto& g = gather->as<PlannedCollective>();
      EXPECT_EQ(g.splits->recv_counts, expected) << "rank " << rank << " " << l;
      EXPECT_EQ(g.count, expected[static_cast<std::size_t>(place.etp_rank)]);
      EXPECT_EQ(gather->bytes, (expected[0] + expected[1]) * 4U);  // float
      EXPECT_EQ(find(plan, l + ".etp_scatter.mb0")->as<PlannedCollective>().splits->send_counts,
                expected);
    }
  }
  EXPECT_GT(uneven, 0) << "every layer's expert-TP ranks received the same rows";
  c.shape.capacity_factor = 1.0;
  const OpPlan padded = build_plan(c, place_rank(c.layout, 1));
  EXPECT_EQ(find(padded, "l1.etp_gather.mb0")->as<PlannedCollective>().kind,
            CollectiveKind::kAllGather);
  EXPECT_EQ(find(padded, "l1.etp_scatter.mb0")->as<PlannedCollective>().kind,
            CollectiveKind::kReduceScatter);
}

// Expert TP splits each expert's FFN: it must divide --moe-ffn.
TEST(Moe, ExpertTensorParallelMustDivideTheExpertsFfn) {
  WorkloadConfig c;
  c.kind = WorkloadKind::kDp;
  c.shape = model_preset("tiny-moe");
  c.layout.dp = 3;
  c.layout.etp = 3;
  EXPECT_THROW(validate_workload(c), ConfigError);
  c.layout.etp = 1;
  EXPECT_NO_THROW(validate_workload(c));
}

}  // namespace
}  // namespace commprof
