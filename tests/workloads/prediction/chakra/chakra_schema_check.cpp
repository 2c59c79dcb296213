// SPDX-License-Identifier: MIT
// Decodes every file `commprof export-chakra` wrote with Chakra's own schema (the pinned
// tests/data/chakra-schema/et_def.proto, compiled by Debian's protoc) and checks each node against
// the run's rank files, read here with nothing of commprof's. Environment:
//   COMMPROF_CHAKRA_RUN     the run folder (rank-<R>.json)
//   COMMPROF_CHAKRA_PREFIX  the export's prefix (PREFIX.<R>.et, PREFIX.comm_groups.json)
// Checked: every message parses whole, with no unknown field, and re-encodes to the same bytes;
// one GlobalMetadata, then the exported step's ops as nodes (one each; a point-to-point op one
// per transfer), each of the type its op implies; a collective's comm_size is what ASTRA-sim
// reads (an all-gather's output over the group's ranks, and one size, the largest member's, on
// every member of a collective) and the i-th collective of each group has the same type and size
// on every member; data_deps are the op's stream predecessor and its recorded waits (`after`),
// ctrl_deps the waits on another stream; COMP durations are the op's, in rounded µs; pg_name is a
// group of comm_groups.json holding the rank; sends pair with receives on (src, dst, tag, size).
#include <google/protobuf/io/coded_stream.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "et_def.pb.h"
#include "support/test_files.hpp"

namespace {

namespace pb = ChakraProtoMsg;
using nlohmann::json;

// Parses one length-delimited message (a varint32 length, then the message: Chakra's framing,
// src/third_party/utils/protoio.cc) and checks it is whole and round-trips byte for byte.
template <typename Msg>
bool read_one(const std::string& bytes, std::size_t& at, Msg& m, const std::string& where) {
  if (at >= bytes.size()) return false;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(&bytes[at]),
                                            static_cast<int>(bytes.size() - at));
  std::uint32_t len = 0;
  EXPECT_TRUE(in.ReadVarint32(&len)) << where;
  EXPECT_GT(len, 0u) << where << ": a zero-length message ends Chakra's reader";
  const std::size_t body = at + static_cast<std::size_t>(in.CurrentPosition());
  EXPECT_LE(body + len, bytes.size()) << where << ": truncated";
  const auto limit = in.PushLimit(static_cast<int>(len));
  EXPECT_TRUE(m.ParseFromCodedStream(&in)) << where;
  EXPECT_TRUE(in.ConsumedEntireMessage()) << where;
  in.PopLimit(limit);
  EXPECT_EQ(m.SerializeAsString(), bytes.substr(body, len)) << where << ": does not re-encode";
  EXPECT_EQ(m.GetReflection()->GetUnknownFields(m).field_count(), 0) << where;
  at = body + len;
  return true;
}

const pb::AttributeProto* attr(const pb::Node& n, const std::string& name) {
  for (const pb::AttributeProto& a : n.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

bool is_p2p(const std::string& c) { return c == "send" || c == "recv" || c == "sendrecv"; }

// Chakra's CollectiveCommType for commprof's collective names; -1: none (a COMP node).
int comm_type(const std::string& c) {
  static const std::map<std::string, int> kTypes = {{"allreduce", pb::ALL_REDUCE},
                                                    {"allgather", pb::ALL_GATHER},
                                                    {"allgatherv", pb::ALL_GATHER},
                                                    {"reducescatter", pb::REDUCE_SCATTER},
                                                    {"reducescatterv", pb::REDUCE_SCATTER},
                                                    {"alltoall", pb::ALL_TO_ALL},
                                                    {"alltoallv", pb::ALL_TO_ALL},
                                                    {"broadcast", pb::BROADCAST},
                                                    {"reduce", pb::REDUCE}};
  const auto it = kTypes.find(c);
  return it == kTypes.end() ? -1 : it->second;
}

// What ASTRA-sim reads as one member's comm_size (before taking the largest member's).
std::int64_t own_size(const json& op) {
  const std::string c = op.at("collective");
  const std::int64_t bytes = op.at("bytes"), n = op.at("comm_size");
  return (c == "allgather" || c == "allgatherv") && n > 1 ? bytes / n : bytes;
}

struct RunStep {
  std::vector<json> ops;  // by rank: the exported step's ops
};

// Each rank's ops at `step`.
RunStep load_step(const std::string& run, int ranks, std::int64_t step) {
  RunStep s;
  for (int r = 0; r < ranks; ++r) {
    const json f =
        json::parse(commprof::test::file_bytes(run + "/rank-" + std::to_string(r) + ".json"));
    json ops = json::array();
    for (const json& st : f.at("steps"))
      if (st.at("index") == step) ops = st.at("ops");
    s.ops.push_back(ops);
  }
  return s;
}

struct Sent {
  std::int64_t src, dst, tag, size;
  bool operator<(const Sent& o) const {
    return std::tie(src, dst, tag, size) < std::tie(o.src, o.dst, o.tag, o.size);
  }
  bool operator==(const Sent& o) const { return !(*this < o) && !(o < *this); }
};

// The exported step of one run against its rank files; each part a method (each under the
// function-length limit), the shared findings kept here.
struct SchemaCheck {
  std::string run, prefix;
  json groups;
  int ranks = 0;
  std::int64_t step = -1;
  std::vector<std::vector<pb::Node>> nodes;  // by rank
  RunStep s;
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> largest;  // by (comm, seq)
  std::map<std::string, std::vector<std::vector<std::pair<int, std::int64_t>>>> per_rank;
  std::multiset<Sent> sends, recvs;

  // One rank's view while its nodes are checked.
  struct Rank {
    int r = 0;
    const json* ops = nullptr;
    std::string where;
    std::vector<int> pred, op_of_node, nodes_of_op;
  };

  // Every .et file: its metadata, then its nodes, each parsed whole with no unknown field.
  void read_exports() {
    nodes.resize(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      const std::string path = prefix + "." + std::to_string(r) + ".et";
      const std::string bytes = commprof::test::file_bytes(path);
      std::size_t at = 0;
      pb::GlobalMetadata meta;
      ASSERT_TRUE(read_one(bytes, at, meta, path + " metadata"));
      EXPECT_EQ(meta.version(), "1.0.0");
      std::map<std::string, std::int64_t> m;
      for (const pb::AttributeProto& a : meta.attr()) m[a.name()] = a.int64_val();
      EXPECT_EQ(m["rank"], r) << path;
      EXPECT_EQ(m["world_size"], ranks) << path;
      if (step < 0) step = m["commprof_step"];
      EXPECT_EQ(m["commprof_step"], step) << path;
      pb::Node n;
      auto& mine = nodes[static_cast<std::size_t>(r)];
      while (read_one(bytes, at, n, path + " node " + std::to_string(mine.size()))) {
        for (const pb::AttributeProto& a : n.attr())
          EXPECT_EQ(a.GetReflection()->GetUnknownFields(a).field_count(), 0) << path;
        mine.push_back(n);
      }
    }
  }

  // Every collective's largest member size, by (comm, seq): one figure on every member.
  void find_largest() {
    for (const json& ops : s.ops)
      for (const json& op : ops)
        if (op.at("category") == "COMM" && comm_type(op.at("collective")) >= 0) {
          std::int64_t& l = largest[{op.at("comm"), op.at("seq")}];
          l = std::max(l, own_size(op));
        }
  }

  // The stream predecessor of each op: its stream's ops in start order.
  static std::vector<int> stream_predecessors(const json& ops) {
    std::vector<int> pred(ops.size(), -1);
    std::vector<int> order(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const json &x = ops[static_cast<std::size_t>(a)], &y = ops[static_cast<std::size_t>(b)];
      if (x.at("stream") != y.at("stream")) return x.at("stream") < y.at("stream");
      return x.at("start_ns").get<std::int64_t>() < y.at("start_ns").get<std::int64_t>();
    });
    for (std::size_t k = 1; k < order.size(); ++k)
      if (ops[order[k - 1]].at("stream") == ops[order[k]].at("stream"))
        pred[order[k]] = order[k - 1];
    return pred;
  }

  // Which op each node of rank r stands for: one node per op, one or more per transfer.
  void map_nodes(Rank& k) {
    const json& ops = *k.ops;
    std::map<std::string, int> op_of;  // name → index in ops
    for (std::size_t i = 0; i < ops.size(); ++i) op_of[ops[i].at("name")] = static_cast<int>(i);
    ASSERT_EQ(op_of.size(), ops.size()) << k.where << ": op names repeat within the step";
    k.nodes_of_op.assign(ops.size(), 0);
    const std::vector<pb::Node>& ns = nodes[static_cast<std::size_t>(k.r)];
    for (std::size_t i = 0; i < ns.size(); ++i) {
      const pb::Node& n = ns[i];
      EXPECT_EQ(n.id(), i) << k.where;
      std::string base = n.name();
      const bool leg = n.type() == pb::COMM_SEND_NODE || n.type() == pb::COMM_RECV_NODE;
      if (leg) base = base.substr(0, base.rfind('.'));
      ASSERT_EQ(op_of.count(base), 1u) << k.where << ": node " << n.name() << " is no op";
      k.op_of_node.push_back(op_of[base]);
      ++k.nodes_of_op[static_cast<std::size_t>(op_of[base])];
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const bool p2p = ops[i].at("category") == "COMM" && is_p2p(ops[i].at("collective"));
      if (p2p)
        EXPECT_GE(k.nodes_of_op[i], 1) << k.where << " " << ops[i].at("name");
      else
        EXPECT_EQ(k.nodes_of_op[i], 1) << k.where << " " << ops[i].at("name");
    }
  }

  // A node's data and control dependencies against the op's stream order and recorded waits.
  void check_deps(const Rank& k, std::size_t i, const std::string& what) {
    const pb::Node& n = nodes[static_cast<std::size_t>(k.r)][i];
    const int o = k.op_of_node[i];
    const json& ops = *k.ops;
    const json& op = ops[static_cast<std::size_t>(o)];
    std::set<int> data, ctrl, want_data, want_ctrl;
    for (const std::uint64_t d : n.data_deps()) {
      ASSERT_LT(d, i) << what;
      data.insert(k.op_of_node[d]);
    }
    for (const std::uint64_t d : n.ctrl_deps()) {
      ASSERT_LT(d, i) << what;
      ctrl.insert(k.op_of_node[d]);
    }
    if (k.pred[static_cast<std::size_t>(o)] >= 0)
      want_data.insert(k.pred[static_cast<std::size_t>(o)]);
    for (const int a : op.value("after", std::vector<int>{})) {
      want_data.insert(a);
      if (ops[static_cast<std::size_t>(a)].at("stream") != op.at("stream")) want_ctrl.insert(a);
    }
    EXPECT_EQ(data, want_data) << what;
    EXPECT_EQ(ctrl, want_ctrl) << what;
  }

  // A node's type and figures: a transfer's leg, a collective in its group, or compute.
  void check_kind(const Rank& k, std::size_t i, const std::string& what) {
    const pb::Node& n = nodes[static_cast<std::size_t>(k.r)][i];
    const int o = k.op_of_node[i];
    const json& op = (*k.ops)[static_cast<std::size_t>(o)];
    const bool comm = op.at("category") == "COMM";
    const std::string c = op.at("collective");
    if (comm && is_p2p(c)) {
      ASSERT_TRUE(n.type() == pb::COMM_SEND_NODE || n.type() == pb::COMM_RECV_NODE) << what;
      const std::int64_t src = attr(n, "comm_src")->int32_val();
      const std::int64_t dst = attr(n, "comm_dst")->int32_val();
      const std::int64_t size = attr(n, "comm_size")->int64_val();
      EXPECT_EQ(size, op.at("bytes").get<std::int64_t>() / k.nodes_of_op[o]) << what;
      const Sent t{src, dst, attr(n, "comm_tag")->int32_val(), size};
      if (n.type() == pb::COMM_SEND_NODE) {
        EXPECT_EQ(src, k.r) << what;
        sends.insert(t);
      } else {
        EXPECT_EQ(dst, k.r) << what;
        recvs.insert(t);
      }
    } else if (comm && comm_type(c) >= 0) {
      ASSERT_EQ(n.type(), pb::COMM_COLL_NODE) << what;
      EXPECT_EQ(attr(n, "comm_type")->int64_val(), comm_type(c)) << what;
      const std::int64_t size = attr(n, "comm_size")->int64_val();
      EXPECT_EQ(size, (largest[{op.at("comm"), op.at("seq")}])) << what;
      const std::string pg = attr(n, "pg_name")->string_val();
      ASSERT_TRUE(groups.contains(pg)) << what << ": group " << pg;
      const std::vector<int> members = groups.at(pg);
      EXPECT_NE(std::find(members.begin(), members.end(), k.r), members.end()) << what;
      auto& seen = per_rank[pg];
      seen.resize(static_cast<std::size_t>(ranks));
      seen[static_cast<std::size_t>(k.r)].emplace_back(comm_type(c), size);
    } else {
      ASSERT_EQ(n.type(), pb::COMP_NODE) << what;
      const std::int64_t ns_long =
          op.at("end_ns").get<std::int64_t>() - op.at("start_ns").get<std::int64_t>();
      EXPECT_EQ(n.duration_micros(),
                static_cast<std::uint64_t>(ns_long <= 0 ? 0 : (ns_long + 500) / 1000))
          << what;
    }
  }

  void check_rank(int r) {
    Rank k;
    k.r = r;
    k.ops = &s.ops[static_cast<std::size_t>(r)];
    k.where = prefix + "." + std::to_string(r) + ".et";
    ASSERT_FALSE(k.ops->empty()) << run << ": rank " << r << " has no step " << step;
    k.pred = stream_predecessors(*k.ops);
    map_nodes(k);
    if (::testing::Test::HasFatalFailure()) return;
    const std::vector<pb::Node>& ns = nodes[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < ns.size(); ++i) {
      const std::string what = k.where + " node " + ns[i].name();
      check_deps(k, i, what);
      check_kind(k, i, what);
    }
  }

  // ASTRA-sim pairs the i-th collective of a group across its members by type and size.
  void check_groups_and_pairs() const {
    for (const auto& [pg, by_rank] : per_rank) {
      const std::vector<int> members = groups.at(pg);
      for (const int m : members)
        EXPECT_EQ(by_rank[static_cast<std::size_t>(m)],
                  by_rank[static_cast<std::size_t>(members.front())])
            << "group " << pg << ": rank " << m << "'s collectives differ from rank "
            << members.front() << "'s";
    }
    EXPECT_EQ(sends, recvs) << "every send pairs with a receive on (src, dst, tag, size)";
  }
};

TEST(ChakraSchema, EveryNodeDecodesWithChakrasSchemaAndMatchesTheRankFiles) {
  SchemaCheck c;
  c.run = commprof::test::env("COMMPROF_CHAKRA_RUN");
  c.prefix = commprof::test::env("COMMPROF_CHAKRA_PREFIX");
  ASSERT_FALSE(c.run.empty());
  ASSERT_FALSE(c.prefix.empty());
  c.groups = json::parse(commprof::test::file_bytes(c.prefix + ".comm_groups.json"));
  while (std::filesystem::exists(c.prefix + "." + std::to_string(c.ranks) + ".et")) ++c.ranks;
  ASSERT_GT(c.ranks, 1);
  c.read_exports();
  ASSERT_FALSE(HasFatalFailure());
  c.s = load_step(c.run, c.ranks, c.step);
  c.find_largest();
  for (int r = 0; r < c.ranks; ++r) {
    c.check_rank(r);
    ASSERT_FALSE(HasFatalFailure());
  }
  c.check_groups_and_pairs();
}

}  // namespace
