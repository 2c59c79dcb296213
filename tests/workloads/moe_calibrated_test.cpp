// SPDX-License-Identifier: MIT
// --compute-from with MoE layers (workloads/step_moe_calibrated.cpp): a traced layer's time
// split among attention, the MoE block's dense part and its routed experts by the one-GPU FLOPs,
// the experts' part a rate per routed row, and layers of different weight by their FLOPs. The
// known answers are worked by hand below from the shape, with a profile of 1 ns per FLOP.
#include <gtest/gtest.h>

#include <numeric>
#include <string>

#include "workloads/compute_profile.hpp"
#include "workloads/moe.hpp"
#include "workloads/workload.hpp"

namespace commprof {
namespace {

// Two layers, the first dense and the second MoE; 32 tokens of h 64 per micro-batch, one
// micro-batch. Per micro-batch on one GPU:
//   attention's GEMMs: qkv 2·32·192·64 = 786,432, scores and context 2·32·32·64 = 131,072 each,
//     out_proj 2·32·64·64 = 262,144: A = 1,310,720
//   the dense FFN (f 128): up and down 2·32·128·64 = 524,288 each: 1,048,576
//   the router (4 experts): 2·32·4·64 = 16,384
//   the routed experts (top-2, FFN 128): 2·32·2·64·(128 + 128) = 2,097,152, over 64 rows
// so the dense layer's FLOPs are 2,359,296 and the MoE layer's 3,424,256.
WorkloadConfig two_layers() {
  WorkloadConfig c;
  c.kind = WorkloadKind::kDp;
  c.shape.layers = 2;
  c.shape.hidden = 64;
  c.shape.heads = 4;
  c.shape.ffn = 128;
  c.shape.seq = 32;
  c.shape.micro_batch = 1;
  c.shape.micro_batches = 1;
  c.shape.vocab = 0;
  c.shape.experts = 4;
  c.shape.top_k = 2;
  c.shape.moe_ffn = 128;
  c.shape.dense_layers = 1;
  c.routing = parse_routing("uniform");
  // Traced at 1 ns per FLOP: forward the two layers' FLOPs, backward twice that.
  ComputeProfile p;
  p.source = "hand";
  p.layers = 2;
  p.micro_batches = 1;
  p.samples = 1;
  p.forward_ns = 2359296.0 + 3424256.0;
  p.backward_ns = 2 * p.forward_ns;
  p.optimizer_ns = 1000;
  c.compute = p;
  return c;
}

double ns_of(const OpPlan& plan, const std::string& name) {
  for (const PlannedOp& op : plan.ops) {
    if (op.name == name) return static_cast<double>(op.as<PlannedCompute>().ns);
  }
  ADD_FAILURE() << "no op " << name;
  return -1;
}

TEST(MoeCalibrated, ALayersTimeSplitsByItsFlopsAndTheLayersByTheirs) {
  WorkloadConfig c = two_layers();
  validate_workload(c);
  const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
  // The dense layer: its 2,359,296 ns as attention and FFN.
  EXPECT_NEAR(ns_of(plan, "l0.attn.mb0.fwd"), 1310720, 1);
  EXPECT_NEAR(ns_of(plan, "l0.ffn.mb0.fwd"), 1048576, 1);
  // The MoE layer: attention, the dense part (the router), the experts' 64 rows.
  EXPECT_NEAR(ns_of(plan, "l1.attn.mb0.fwd"), 1310720, 1);
  EXPECT_NEAR(ns_of(plan, "l1.moe_dense.mb0.fwd"), 16384, 1);
  EXPECT_NEAR(ns_of(plan, "l1.experts.mb0.fwd"), 2097152, 1);
  EXPECT_NEAR(ns_of(plan, "l1.attn.mb0.bwd"), 2 * 1310720, 1);
  EXPECT_NEAR(ns_of(plan, "l1.moe_dense.mb0.bwd"), 2 * 16384, 1);
  EXPECT_NEAR(ns_of(plan, "l1.experts.mb0.bwd"), 2 * 2097152, 1);
  // The routing counts are still read on the host; at EP 1 no all-to-allv.
  bool counts = false, a2a = false;
  for (const PlannedOp& op : plan.ops) {
    counts = counts || (op.name == "l1.routing_counts.mb0.d2h" && op.host_waits);
    a2a = a2a || op.name.find("dispatch") != std::string::npos;
  }
  EXPECT_TRUE(counts);
  EXPECT_FALSE(a2a);
}

// At EP 2 a rank's experts run for the rows the run's router sends it: 32,768 ns per row (the
// traced 2,097,152 ns over 64 rows). Uniform routing of two ranks' 64 rows each over 4 experts
// gives each rank 64; Zipf gives the rank of the hot experts more, and the other fewer.
TEST(MoeCalibrated, AtEp2TheExpertsRunTheirRowsAtTheTracedRate) {
  for (const char* routing : {"uniform", "zipf:1.5"}) {
    WorkloadConfig c = two_layers();
    c.layout.dp = 2;
    c.layout.ep = 2;
    c.routing = parse_routing(routing);
    validate_workload(c);
    double all_rows = 0;
    for (int r = 0; r < 2; ++r) {
      const RankPlace place = place_rank(c.layout, r);
      const OpPlan plan = build_plan(c, place);
      const Routing router(c.routing, c.shape.experts);
      const MoeDispatch d = moe_dispatch(c.shape, router, 1, 2, place.ep_rank, moe_tokens(c), 0);
      const double rows = std::accumulate(d.expert_rows.begin(), d.expert_rows.end(), 0.0);
      all_rows += rows;
      if (std::string(routing) == "uniform") {
        EXPECT_EQ(rows, 64) << "rank " << r;
      }
      EXPECT_NEAR(ns_of(plan, "l1.experts.mb0.fwd"), 32768 * rows, 1) << routing << " " << r;
      EXPECT_NEAR(ns_of(plan, "l1.experts.mb0.bwd"), 2 * 32768 * rows, 1) << routing << " " << r;
      bool dispatch = false, combine = false;
      for (const PlannedOp& op : plan.ops) {
        dispatch = dispatch || op.name == "l1.dispatch.mb0";
        combine = combine || op.name == "l1.combine.mb0";
      }
      EXPECT_TRUE(dispatch && combine) << "the all-to-allvs stay real";
    }
    EXPECT_EQ(all_rows, 128) << routing;  // every routed row runs somewhere
  }
}

}  // namespace
}  // namespace commprof
