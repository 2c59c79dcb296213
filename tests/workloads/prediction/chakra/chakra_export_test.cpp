// SPDX-License-Identifier: MIT
// The Chakra export read back by a decoder written from the protobuf wire format and Chakra's
// et_def.proto (tests/support/chakra_wire_reader.hpp; nothing shared with the encoder),
// over a hand-built step of 8 ranks, tp2 × dp2 × pp2 (rank = tp + 2·(dp + 2·pp)). Times in µs:
//
//   stage 0 (ranks 0-3)                         stage 1 (ranks 4-7)
//   0 fwd         COMP [0,10]                   0 pp.recv_act.mb0   recv  [0,14]
//   1 tp.ar       allreduce tp [10,12] after 0  1 fwd               COMP  [14,24] after 0
//   2 pp.send_act send pp [12,14]               2 tp.ar             allreduce tp [24,26] after 1
//   3 pp.recv_grad recv pp [14,40]              3 bwd               COMP  [26,38] after 2
//   4 bwd         COMP [40,60] after 3          4 pp.send_grad.mb0  send  [38,40] after 3
//   5 dp.ar       allreduce dp [60,70] after 4  5 dp.ar             allreduce dp [56,70] after 3
//   6 copy_out    MEM [70,70.4] after 5         6 copy_out          MEM   [70,70.4] after 5
//
// Ranks 2 and 3 start their dp all-reduce at 62: the collective's time is its shortest member's,
// 8 µs. tp all-reduces carry 4096 B, stage 0's dp 65536 B and stage 1's 131072 B, sends 8192 B,
// copies 65536 B.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analysis/graph/step_graph.hpp"
#include "collectives/links/link_model.hpp"
#include "src/core/errors.hpp"
#include "support/chakra_wire_reader.hpp"
#include "workloads/prediction/chakra/astra_network.hpp"
#include "workloads/prediction/chakra/chakra_trace.hpp"

namespace commprof {
namespace {

using chakra_wire::Attr;
using chakra_wire::kAllReduce;
using chakra_wire::kBoolList;
using chakra_wire::kBoolVal;
using chakra_wire::kColl;
using chakra_wire::kComp;
using chakra_wire::kInt32Val;
using chakra_wire::kInt64Val;
using chakra_wire::kRecv;
using chakra_wire::kSend;
using chakra_wire::kStringVal;
using chakra_wire::kUint64Val;
using chakra_wire::Node;
using chakra_wire::read_trace;
using chakra_wire::Trace;

// --- The hand-built run -------------------------------------------------------------------------

OpRecord op(const std::string& name, Category c, double start_us, double end_us,
            std::vector<std::int32_t> after = {}) {
  OpRecord r;
  r.name = name;
  r.category = c;
  r.stream = category_name(c);
  r.start_ns = static_cast<std::int64_t>(std::llround(start_us * 1000));
  r.end_ns = static_cast<std::int64_t>(std::llround(end_us * 1000));
  r.after = std::move(after);
  return r;
}

OpRecord comm(const std::string& name, const std::string& collective, const std::string& group,
              std::int64_t seq, std::uint64_t bytes, double start, double end,
              std::vector<std::int32_t> after = {}) {
  OpRecord r = op(name, Category::kComm, start, end, std::move(after));
  r.collective = collective;
  r.comm = group;
  r.comm_size = 2;
  r.seq = seq;
  r.bytes = bytes;
  return r;
}

RankTimeline rank_of(int rank) {
  const int tp = rank % 2, dp = (rank / 2) % 2, pp = rank / 4;
  const std::string tpc = "tp" + std::to_string(rank / 2), dpc = "dp" + std::to_string(tp + 2 * pp),
                    ppc = "pp" + std::to_string(tp + 2 * dp);
  RankTimeline t;
  t.rank = rank;
  t.world_size = 8;
  StepRecord s;
  s.index = 5;
  OpRecord copy = op("copy_out", Category::kMem, 70, 70.4, {5});
  copy.bytes = 65536;
  if (pp == 0) {
    const double dp_start = dp == 1 ? 62 : 60;
    s.ops = {op("fwd", Category::kComp, 0, 10),
             comm("tp.ar", "allreduce", tpc, 0, 4096, 10, 12, {0}),
             comm("pp.send_act.mb0", "send", ppc, -1, 8192, 12, 14),
             comm("pp.recv_grad.mb0", "recv", ppc, -1, 8192, 14, 40),
             op("bwd", Category::kComp, 40, 60, {3}),
             comm("dp.bucket0.allreduce", "allreduce", dpc, 0, 65536, dp_start, 70, {4}),
             copy};
  } else {
    s.ops = {comm("pp.recv_act.mb0", "recv", ppc, -1, 8192, 0, 14),
             op("fwd", Category::kComp, 14, 24, {0}),
             comm("tp.ar", "allreduce", tpc, 0, 4096, 24, 26, {1}),
             op("bwd", Category::kComp, 26, 38, {2}),
             comm("pp.send_grad.mb0", "send", ppc, -1, 8192, 38, 40, {3}),
             comm("dp.bucket0.allreduce", "allreduce", dpc, 0, 131072, 56, 70, {3}),
             copy};
  }
  s.end_ns = 70400;
  t.steps.push_back(std::move(s));
  return t;
}

std::vector<StepGraph> graphs_of(const std::vector<RankTimeline>& ranks) {
  StepGraphBuilder b;
  for (const RankTimeline& t : ranks) b.add(t);
  return b.finish();
}

class ChakraExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<RankTimeline> ranks;
    for (int r = 0; r < 8; ++r) ranks.push_back(rank_of(r));
    graphs_ = graphs_of(ranks);
    ASSERT_EQ(graphs_.size(), 1u);
    dims_ = measured_network(graphs_, graphs_[0]);
    export_ = chakra_export(graphs_[0], dims_of(dims_));
    for (const ChakraRankTrace& r : export_.ranks)
      traces_.push_back(read_trace(encode_chakra_trace(export_, r, "commprof test")));
  }
  std::vector<StepGraph> graphs_;
  std::vector<NetworkDim> dims_;
  ChakraExport export_;
  std::vector<Trace> traces_;
};

TEST_F(ChakraExportTest, OneFilePerRankWithMetadataAndOneNodePerOp) {
  ASSERT_EQ(traces_.size(), 8u);
  for (std::size_t r = 0; r < traces_.size(); ++r) {
    const Trace& t = traces_[r];
    EXPECT_EQ(t.version, "1.0.0");
    std::map<std::string, Attr> meta;
    for (const Attr& a : t.meta) meta[a.name] = a;
    EXPECT_EQ(meta.at("rank").number, r);
    EXPECT_EQ(meta.at("world_size").number, 8u);
    EXPECT_EQ(meta.at("commprof_step").number, 5u);
    ASSERT_EQ(t.nodes.size(), 7u) << "rank " << r;
    std::map<std::uint64_t, int> types;
    for (std::size_t i = 0; i < t.nodes.size(); ++i) {
      EXPECT_EQ(t.nodes[i].id, i);
      ++types[t.nodes[i].type];
      EXPECT_EQ(t.nodes[i].attr("is_cpu_op").field, kBoolVal);  // false
      EXPECT_EQ(t.nodes[i].attr("is_cpu_op").number, 0u);
    }
    EXPECT_EQ(types[kComp], 3) << "fwd, bwd and the MEM copy";
    EXPECT_EQ(types[kColl], 2);
    EXPECT_EQ(types[kSend], 1);
    EXPECT_EQ(types[kRecv], 1);
  }
  EXPECT_EQ(export_.comp_nodes, 16);
  EXPECT_EQ(export_.mem_as_comp, 8);
  EXPECT_EQ(export_.coll_nodes, 16);
  EXPECT_EQ(export_.send_nodes, 8);
  EXPECT_EQ(export_.recv_nodes, 8);
  EXPECT_EQ(export_.zero_us, 8) << "the 0.4 us copies";
}

TEST_F(ChakraExportTest, DependenciesFollowStreamOrderAndRecordedWaits) {
  const std::vector<Node>& n = traces_[0].nodes;
  using V = std::vector<std::uint64_t>;
  EXPECT_EQ(n[0].data, V{});
  EXPECT_EQ(n[1].data, V{0});  // tp.ar waited for fwd
  EXPECT_EQ(n[1].ctrl, V{0});
  EXPECT_EQ(n[2].data, V{1});  // the send follows tp.ar on the COMM stream
  EXPECT_EQ(n[2].ctrl, V{});
  EXPECT_EQ(n[3].data, V{2});
  EXPECT_EQ(n[4].data, (V{0, 3}));  // bwd: after fwd on COMP, and it waited for the receive
  EXPECT_EQ(n[4].ctrl, V{3});
  EXPECT_EQ(n[5].data, (V{3, 4}));
  EXPECT_EQ(n[5].ctrl, V{4});
  EXPECT_EQ(n[6].data, V{5});  // the first MEM op waited for the all-reduce
  EXPECT_EQ(n[6].ctrl, V{5});
  const std::vector<Node>& m = traces_[4].nodes;
  EXPECT_EQ(m[5].data, (V{3, 4}));  // stage 1's dp.ar: after the send, and waited for bwd
  EXPECT_EQ(m[5].ctrl, V{3});
}

TEST_F(ChakraExportTest, DurationsInWholeMicrosecondsCollectivesTheirTransferTime) {
  const std::vector<Node>& n = traces_[0].nodes;
  EXPECT_EQ(n[0].duration, 10u);
  EXPECT_EQ(n[1].duration, 2u);
  EXPECT_EQ(n[3].duration, 26u);
  EXPECT_EQ(n[4].start, 40u);
  EXPECT_EQ(n[4].duration, 20u);
  EXPECT_EQ(n[5].duration, 8u) << "rank 0 took 10 us, rank 2 (last to arrive) 8";
  EXPECT_EQ(n[6].duration, 0u);
  EXPECT_EQ(traces_[2].nodes[5].duration, 8u);
  EXPECT_EQ(traces_[4].nodes[5].duration, 14u);
}

TEST_F(ChakraExportTest, CollectivesCarryTypeSizeGroupAndDimension) {
  // Groups by name: dp0..dp3 = 1..4, pp0..pp3 = 5..8, tp0..tp3 = 9..12.
  ASSERT_EQ(export_.groups.size(), 12u);
  std::ostringstream groups_json;
  write_comm_groups_json(groups_json, export_.groups);
  const nlohmann::json g = nlohmann::json::parse(groups_json.str());
  EXPECT_EQ(g.size(), 12u);
  EXPECT_EQ(g.at("1"), nlohmann::json({0, 2}));
  EXPECT_EQ(g.at("4"), nlohmann::json({5, 7}));
  EXPECT_EQ(g.at("5"), nlohmann::json({0, 4}));
  EXPECT_EQ(g.at("9"), nlohmann::json({0, 1}));
  EXPECT_EQ(g.at("12"), nlohmann::json({6, 7}));

  const Node& tp = traces_[3].nodes[1];
  EXPECT_EQ(tp.attr("comm_type").field, kInt64Val);
  EXPECT_EQ(tp.attr("comm_type").number, kAllReduce);
  // ASTRA-sim's feeder reads comm_size as int64_val.
  EXPECT_EQ(tp.attr("comm_size").field, kInt64Val);
  EXPECT_EQ(tp.attr("comm_size").number, 4096u);
  EXPECT_EQ(tp.attr("pg_name").field, kStringVal);
  EXPECT_EQ(tp.attr("pg_name").text, "10");  // tp1: ranks 2, 3
  EXPECT_EQ(tp.attr("involved_dim").field, kBoolList);
  EXPECT_EQ(tp.attr("involved_dim").list, (std::vector<bool>{true, false, false}));
  const Node& dp = traces_[5].nodes[5];
  EXPECT_EQ(dp.attr("comm_size").number, 131072u);
  EXPECT_EQ(dp.attr("pg_name").text, "4");  // dp3: ranks 5, 7
  EXPECT_EQ(dp.attr("involved_dim").list, (std::vector<bool>{false, true, false}));
  EXPECT_EQ(traces_[0].nodes[0].attr("commprof_category").text, "COMP");
  EXPECT_EQ(traces_[0].nodes[6].attr("commprof_category").text, "MEM");
  EXPECT_EQ(traces_[0].nodes[6].attr("tensor_size").field, kUint64Val);
  EXPECT_EQ(traces_[0].nodes[6].attr("tensor_size").number, 65536u);
  EXPECT_FALSE(traces_[0].nodes[0].has("tensor_size")) << "fwd records no bytes";
}

TEST_F(ChakraExportTest, SendsAndReceivesPairAcrossRankFiles) {
  // (src, dst, tag) → comm_size, from the SEND nodes of every file, then every RECV takes one.
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, std::uint64_t> sends;
  for (std::size_t r = 0; r < traces_.size(); ++r) {
    for (const Node& n : traces_[r].nodes) {
      if (n.type != kSend) continue;
      EXPECT_EQ(n.attr("comm_src").number, r);
      EXPECT_EQ(n.attr("comm_src").field, kInt32Val);
      EXPECT_EQ(n.attr("comm_dst").field, kInt32Val);
      EXPECT_EQ(n.attr("comm_tag").field, kInt32Val);
      EXPECT_EQ(n.attr("comm_size").field, kInt64Val);
      EXPECT_TRUE(n.has("pg_name"));
      sends[{n.attr("comm_src").number, n.attr("comm_dst").number, n.attr("comm_tag").number}] =
          n.attr("comm_size").number;
    }
  }
  EXPECT_EQ(sends.size(), 8u);
  std::size_t matched = 0;
  for (std::size_t r = 0; r < traces_.size(); ++r) {
    for (const Node& n : traces_[r].nodes) {
      if (n.type != kRecv) continue;
      EXPECT_EQ(n.attr("comm_dst").number, r);
      EXPECT_EQ(n.attr("comm_src").field, kInt32Val);
      EXPECT_EQ(n.attr("comm_dst").field, kInt32Val);
      EXPECT_EQ(n.attr("comm_tag").field, kInt32Val);
      EXPECT_EQ(n.attr("comm_size").field, kInt64Val);
      const auto it = sends.find(
          {n.attr("comm_src").number, n.attr("comm_dst").number, n.attr("comm_tag").number});
      ASSERT_NE(it, sends.end()) << "rank " << r << "'s " << n.name << " has no send";
      EXPECT_EQ(it->second, n.attr("comm_size").number);
      sends.erase(it);
      ++matched;
    }
  }
  EXPECT_EQ(matched, 8u);
  // Stage 0 sends activations forward: rank 1 → rank 5 (pp1); rank 5 sends gradients back.
  EXPECT_EQ(traces_[1].nodes[2].attr("comm_dst").number, 5u);
  EXPECT_EQ(traces_[5].nodes[4].attr("comm_dst").number, 1u);
  EXPECT_EQ(traces_[1].nodes[2].attr("pg_name").text, "6");
}

TEST_F(ChakraExportTest, NetworkDimensionsFittedPerCommunicatorKind) {
  ASSERT_EQ(dims_.size(), 3u);
  EXPECT_EQ(dims_[0].kind, "tp");
  EXPECT_EQ(dims_[1].kind, "dp");
  EXPECT_EQ(dims_[2].kind, "pp");
  for (const NetworkDim& d : dims_) EXPECT_EQ(d.npus, 2);
  // tp: one size, 4096 B × busbw factor 2(n−1)/n = 1 in 2 µs: busbw 2.048 GB/s.
  EXPECT_NEAR(dims_[0].bandwidth_gbps, 2.048, 1e-9);
  EXPECT_EQ(dims_[0].latency_ns, 0.0);
  // dp: 65536 B in 8 µs and 131072 B in 14 µs, 2 ring steps each: 2L + 65536/B = 8000 and
  // 2L + 131072/B = 14000, so B = 65536/6000 GB/s and L = 1000 ns.
  EXPECT_NEAR(dims_[1].bandwidth_gbps, 65536.0 / 6000.0, 1e-6);
  EXPECT_NEAR(dims_[1].latency_ns, 1000.0, 1e-6);
  // pp: no collective; the shortest 8192 B transfer took 2 µs.
  EXPECT_NEAR(dims_[2].bandwidth_gbps, 4.096, 1e-9);

  std::ostringstream yaml;
  write_network_yaml(yaml, dims_, {"a header"});
  const std::string y = yaml.str();
  EXPECT_NE(y.find("# a header\n"), std::string::npos);
  EXPECT_NE(y.find("topology: [ Ring, Ring, Ring ]\n"), std::string::npos) << y;
  EXPECT_NE(y.find("npus_count: [ 2, 2, 2 ]\n"), std::string::npos) << y;
  // In ASTRA-sim's unit: its analytical backend reads "GB/s" as 2^30 B/s, so 2.048e9 B/s is
  // 1.90735 there (written as 2.048, every link would run 7.4% fast), to six digits.
  EXPECT_NEAR(astra_bandwidth(1.0), 1e9 / 1073741824.0, 1e-15);
  EXPECT_NE(y.find("bandwidth: [ 1.90735, 10.1725, 3.8147 ]  # GiB/s (2^30 B/s): ASTRA-sim's "
                   "\"GB/s\"\n"),
            std::string::npos)
      << y;
  EXPECT_NE(y.find("latency: [ 0.0, 1000.0, 0.0 ]  # ns\n"), std::string::npos) << y;
}

TEST(ChakraExport, OneSendRecvOpBecomesASendAndAReceive) {
  // 1F1B's steady state on two stages: each sends one way and receives the other in one group.
  auto rank = [](int r, const char* name) {
    RankTimeline t;
    t.rank = r;
    t.world_size = 2;
    StepRecord s;
    s.index = 1;
    s.ops = {op("fwd", Category::kComp, 0, 5),
             comm(name, "sendrecv", "pp0", -1, 2 * 1000, 5, 9, {0})};
    t.steps.push_back(std::move(s));
    return t;
  };
  const std::vector<StepGraph> g =
      graphs_of({rank(0, "pp.send_act+recv_grad.mb1"), rank(1, "pp.send_grad+recv_act.mb1")});
  const ChakraExport e = chakra_export(g.at(0));
  ASSERT_EQ(e.ranks.size(), 2u);
  for (const ChakraRankTrace& r : e.ranks) {
    const Trace t = read_trace(encode_chakra_trace(e, r, "test"));
    ASSERT_EQ(t.nodes.size(), 3u);
    EXPECT_EQ(t.nodes[1].type, kSend);
    EXPECT_EQ(t.nodes[2].type, kRecv);
    const std::uint64_t me = static_cast<std::uint64_t>(r.rank), peer = 1 - me;
    EXPECT_EQ(t.nodes[1].attr("comm_dst").number, peer);
    EXPECT_EQ(t.nodes[2].attr("comm_src").number, peer);
    EXPECT_EQ(t.nodes[1].attr("comm_size").number, 1000u) << "bytes per transfer";
    EXPECT_EQ(t.nodes[1].attr("comm_tag").number, 0u);
    EXPECT_EQ(t.nodes[2].attr("comm_tag").number, 0u);
    EXPECT_EQ(t.nodes[1].data, std::vector<std::uint64_t>{0});
    EXPECT_EQ(t.nodes[2].data, std::vector<std::uint64_t>{0});
  }
}

TEST(ChakraExport, PeersComeFromTheFilesSendToAndRecvFrom) {
  // A context-parallel ring of three ranks: each sends to the next and receives from the one
  // before, in one op whose name says nothing of either; the file's send_to and recv_from do.
  auto rank = [](int r) {
    RankTimeline t;
    t.rank = r;
    t.world_size = 3;
    StepRecord s;
    s.index = 1;
    OpRecord ring = comm("cp.ring.step0", "sendrecv", "cp0", -1, 2 * 512, 0, 4);
    ring.send_to = {(r + 1) % 3};
    ring.recv_from = {(r + 2) % 3};
    s.ops = {ring};
    t.steps.push_back(std::move(s));
    return t;
  };
  const ChakraExport e = chakra_export(graphs_of({rank(0), rank(1), rank(2)}).at(0));
  ASSERT_EQ(e.ranks.size(), 3u);
  for (const ChakraRankTrace& r : e.ranks) {
    const Trace t = read_trace(encode_chakra_trace(e, r, "test"));
    ASSERT_EQ(t.nodes.size(), 2u);
    const std::uint64_t me = static_cast<std::uint64_t>(r.rank);
    EXPECT_EQ(t.nodes[0].type, kSend);
    EXPECT_EQ(t.nodes[0].attr("comm_src").number, me);
    EXPECT_EQ(t.nodes[0].attr("comm_dst").number, (me + 1) % 3);
    EXPECT_EQ(t.nodes[1].type, kRecv);
    EXPECT_EQ(t.nodes[1].attr("comm_src").number, (me + 2) % 3);
    EXPECT_EQ(t.nodes[1].attr("comm_size").number, 512u);
  }
}

TEST(ChakraExport, EveryCollectiveHasItsCommTypeAndComputeItsOps) {
  // Two ranks calling each collective commprof records once, then a GEMM of known FLOPs: the
  // CollectiveCommType of et_def.proto each becomes (the uneven kinds as their even ones, which
  // move the same total bytes), and the GEMM's num_ops.
  const std::vector<std::pair<std::string, std::uint64_t>> kinds = {
      {"allreduce", chakra_wire::kAllReduce},
      {"allgather", chakra_wire::kAllGather},
      {"reducescatter", chakra_wire::kReduceScatter},
      {"alltoall", chakra_wire::kAllToAll},
      {"alltoallv", chakra_wire::kAllToAll},
      {"allgatherv", chakra_wire::kAllGather},
      {"reducescatterv", chakra_wire::kReduceScatter},
      {"broadcast", chakra_wire::kBroadcast},
      {"reduce", chakra_wire::kReduce}};
  auto rank = [&kinds](int r) {
    RankTimeline t;
    t.rank = r;
    t.world_size = 2;
    StepRecord s;
    s.index = 3;
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      const double at = static_cast<double>(2 * i);
      s.ops.push_back(comm("c" + std::to_string(i), kinds[i].first, "world", static_cast<int>(i),
                           1024 * (i + 1), at, at + 1));
    }
    OpRecord gemm = op("gemm", Category::kComp, 30, 31);
    gemm.flops = 6.0e9;
    s.ops.push_back(gemm);
    t.steps.push_back(std::move(s));
    return t;
  };
  const ChakraExport e = chakra_export(graphs_of({rank(0), rank(1)}).at(0));
  ASSERT_EQ(e.ranks.size(), 2u);
  for (const ChakraRankTrace& r : e.ranks) {
    const Trace t = read_trace(encode_chakra_trace(e, r, "test"));
    ASSERT_EQ(t.nodes.size(), kinds.size() + 1) << "rank " << r.rank;
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      const Node& n = t.nodes[i];
      EXPECT_EQ(n.type, kColl) << kinds[i].first;
      EXPECT_EQ(n.attr("comm_type").field, kInt64Val) << kinds[i].first;
      EXPECT_EQ(n.attr("comm_type").number, kinds[i].second) << kinds[i].first;
      // ASTRA-sim reads an all-gather's comm_size as each rank's input: the output over the 2
      // ranks. Every other kind's is the op's bytes.
      const bool gather = kinds[i].first == "allgather" || kinds[i].first == "allgatherv";
      EXPECT_EQ(n.attr("comm_size").number, 1024 * (i + 1) / (gather ? 2 : 1)) << kinds[i].first;
    }
    const Node& gemm = t.nodes.back();
    EXPECT_EQ(gemm.type, kComp);
    EXPECT_EQ(gemm.attr("num_ops").field, kInt64Val);
    EXPECT_EQ(gemm.attr("num_ops").number, 6000000000u);
  }
}

TEST(ChakraExport, AnUnevenAllToAllCarriesItsLargestMembersSizeOnEveryRank) {
  // ASTRA-sim pairs an all-to-all's chunks (comm_size / n) by size across its members: ranks
  // sending 60416 and 76800 B would never pair and no rank would finish. Both carry 76800, and
  // the export says how many nodes were raised.
  auto rank = [](int r, std::uint64_t bytes) {
    RankTimeline t;
    t.rank = r;
    t.world_size = 2;
    StepRecord s;
    s.index = 1;
    s.ops.push_back(comm("combine", "alltoallv", "ep0", 0, bytes, 0, 5));
    t.steps.push_back(std::move(s));
    return t;
  };
  const ChakraExport e = chakra_export(graphs_of({rank(0, 60416), rank(1, 76800)}).at(0));
  for (const ChakraRankTrace& r : e.ranks) {
    const Trace t = read_trace(encode_chakra_trace(e, r, "test"));
    ASSERT_EQ(t.nodes.size(), 1u);
    EXPECT_EQ(t.nodes[0].attr("comm_size").number, 76800u) << "rank " << r.rank;
  }
  EXPECT_EQ(e.raised_size, 1);
  ASSERT_FALSE(e.notes.empty());
  EXPECT_NE(e.notes.front().find("1 collective node(s) carry their collective's largest"),
            std::string::npos)
      << e.notes.front();
}

// An expert-parallel step on two ranks: dp's all-reduces and ep's all-to-alls cover the same
// ranks. The all-to-alls' sizes are close and their times noisy (the larger one faster), so
// alone they fit no bandwidth term, and ASTRA-sim refuses a bandwidth of 0.
std::vector<StepGraph> moe_step(bool with_dp) {
  std::vector<RankTimeline> ranks;
  for (int r = 0; r < 2; ++r) {
    RankTimeline t;
    t.rank = r;
    t.world_size = 2;
    StepRecord s;
    s.index = 1;
    if (with_dp) {
      s.ops.push_back(comm("dp.bucket0.allreduce", "allreduce", "dp0", 0, 1 << 20, 0, 20));
      s.ops.push_back(comm("dp.bucket1.allreduce", "allreduce", "dp0", 1, 2 << 20, 20, 56));
    }
    s.ops.push_back(comm("ep.dispatch", "alltoall", "ep0", 0, 65536, 60, 70));
    s.ops.push_back(comm("ep.combine", "alltoall", "ep0", 1, 69632, 70, 79));
    s.ops.push_back(comm("ep.dispatch2", "alltoall", "ep0", 2, 65536, 80, 90));
    t.steps.push_back(std::move(s));
    ranks.push_back(std::move(t));
  }
  return graphs_of(ranks);
}

TEST(ChakraExport, KindsOnTheSameRanksShareOneDimensionAndItsFit) {
  const std::vector<StepGraph> g = moe_step(true);
  const std::vector<NetworkDim> dims = measured_network(g, g.at(0));
  ASSERT_EQ(dims.size(), 1u);
  EXPECT_EQ(dims[0].kind, "ep") << "the kind with the most ops";
  EXPECT_EQ(dims[0].alike, std::vector<std::string>{"dp"});
  // dp's 1 and 2 MiB all-reduces set the bandwidth: far above what the all-to-alls alone say.
  EXPECT_GT(dims[0].bandwidth_gbps, 50.0) << dims[0].how;
  EXPECT_NE(dims[0].how.find("(with dp: the same ranks)"), std::string::npos) << dims[0].how;
  const ChakraDims cd = dims_of(dims);
  EXPECT_EQ(cd.dim_of_kind.at("dp"), 0);
  EXPECT_EQ(cd.dim_of_kind.at("ep"), 0);
}

TEST(ChakraExport, ALatencyOnlyFitStillWritesABandwidthThatKeepsTheTotalTime) {
  const std::vector<StepGraph> g = moe_step(false);
  const std::vector<NetworkDim> dims = measured_network(g, g.at(0));
  ASSERT_EQ(dims.size(), 1u);
  const NetworkDim& d = dims[0];
  ASSERT_GT(d.bandwidth_gbps, 0.0) << "ASTRA-sim refuses 0: " << d.how;
  EXPECT_NE(d.how.find("latency alone"), std::string::npos) << d.how;
  // The three all-to-alls' time, 10 + 9 + 10 µs, is what latency and bandwidth give together.
  const int n = 2;
  const double steps = link_steps(CollectiveKind::kAllToAll, n);
  const double factor = link_bus_factor(CollectiveKind::kAllToAll, n);
  double modelled_us = 0;
  for (const double bytes : {65536.0, 69632.0, 65536.0})
    modelled_us += d.latency_ns / 1e3 * steps + bytes * factor / (d.bandwidth_gbps * 1e3);
  EXPECT_NEAR(modelled_us, 29.0, 1e-6) << d.how;
  std::ostringstream yaml;
  write_network_yaml(yaml, dims, {});
  EXPECT_EQ(yaml.str().find("bandwidth: [ 0"), std::string::npos) << yaml.str();
}

TEST(ChakraWireReader, RefusesAVarintInAFieldOfAnotherType) {
  // AttributeProto { name = 1 "x"; double_val = 3 as a varint 5 }: not a member the export sets.
  const std::string bad = std::string("\x0a\x01x\x18\x05", 5);
  EXPECT_THROW(chakra_wire::read_attr(bad), std::runtime_error);
  // int64_val = 9: 0x48.
  const std::string good = std::string("\x0a\x01x\x48\x05", 5);
  EXPECT_EQ(chakra_wire::read_attr(good).field, kInt64Val);
  EXPECT_EQ(chakra_wire::read_attr(good).number, 5u);
}

TEST(ChakraExport, NodesComeAfterWhatTheyDependOn) {
  // The file lists a copy before the compute it waited for: the compute's node is written first.
  RankTimeline t;
  t.world_size = 1;
  StepRecord s;
  s.index = 0;
  s.ops = {op("copy", Category::kMem, 5, 6, {1}), op("fwd", Category::kComp, 0, 4)};
  t.steps.push_back(s);
  const ChakraExport e = chakra_export(graphs_of({t}).at(0));
  const Trace trace = read_trace(encode_chakra_trace(e, e.ranks.at(0), "test"));
  ASSERT_EQ(trace.nodes.size(), 2u);
  EXPECT_EQ(trace.nodes[0].name, "fwd");
  EXPECT_EQ(trace.nodes[1].name, "copy");
  EXPECT_EQ(trace.nodes[1].data, std::vector<std::uint64_t>{0});
  // A wait against its own stream's order: no order exists.
  t.steps[0].ops = {op("a", Category::kComp, 0, 1, {1}), op("b", Category::kComp, 2, 3)};
  const std::vector<StepGraph> cyclic = graphs_of({t});
  try {
    chakra_export(cyclic.at(0));
    FAIL() << "exported a cycle";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what())
                  .find("rank 0, step 0: the ops' waits and stream order form a cycle"),
              std::string::npos)
        << err.what();
  }
}

TEST(ChakraExport, RefusesWhatItCannotSay) {
  // A receive whose name does not say from where (an import's "nccl:recv").
  RankTimeline t;
  t.world_size = 1;
  StepRecord s;
  s.index = 2;
  s.ops = {comm("nccl:recv", "recv", "pp0", -1, 64, 0, 1)};
  t.steps.push_back(s);
  const std::vector<StepGraph> g = graphs_of({t});
  try {
    chakra_export(g.at(0));
    FAIL() << "exported a receive without a peer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot tell the peers of recv op 'nccl:recv'"),
              std::string::npos)
        << e.what();
  }
  // A step that lacks rank 0.
  t.rank = 1;
  t.steps[0].ops = {op("fwd", Category::kComp, 0, 1)};
  const std::vector<StepGraph> g1 = graphs_of({t});
  EXPECT_THROW(chakra_export(g1.at(0)), Error);
}

}  // namespace
}  // namespace commprof
