// SPDX-License-Identifier: MIT
// One measured step's graph (analysis/graph/step_graph.hpp) as Chakra execution traces, one per
// rank, for ASTRA-sim: a node per op (COMP, COMM_COLL, COMM_SEND/COMM_RECV), integer µs
// durations, dependencies from stream order and the recorded waits, and the attributes ASTRA-sim
// reads (astra-sim/workload/Workload.cc of astra-sim/astra-sim 518bd51, 2026-03-25: is_cpu_op,
// num_ops, tensor_size, comm_type, comm_size, comm_src, comm_dst, comm_tag, pg_name,
// involved_dim), each typed as mlcommons/chakra's feeder reads it (src/feeder/et_feeder_node.cpp
// at 21585d8: bool_val, int64_val, uint64_val, int32_val, string_val, bool_list). What the traces
// cannot say is listed by chakra_losses().
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/graph/step_graph.hpp"
#include "workloads/prediction/chakra/chakra_schema.hpp"

namespace commprof {

/// One attribute of a node, typed as ASTRA-sim's feeder reads it.
struct ChakraAttr {
  enum class Kind { kBool, kInt32, kInt64, kUint64, kString, kBoolList };
  std::string name;
  Kind kind = Kind::kInt64;
  std::int64_t integer = 0;  ///< kInt32, kInt64, kUint64 (as unsigned), kBool (0/1)
  std::string text;          ///< kString
  std::vector<bool> list;    ///< kBoolList
};

struct ChakraNode {
  std::uint64_t id = 0;
  std::string name;
  chakra::NodeType type = chakra::NodeType::kComp;
  std::vector<std::uint64_t> data_deps;  ///< every op it must follow (stream order and waits)
  std::vector<std::uint64_t> ctrl_deps;  ///< of those, the recorded cross-stream waits
  std::uint64_t start_us = 0;            ///< from the step's earliest start, rank 0's clock
  std::uint64_t duration_us = 0;
  std::vector<ChakraAttr> attrs;
  /// The attribute named `name`, or null.
  const ChakraAttr* attr(const std::string& name) const;
};

/// A communicator as ASTRA-sim's group file names it: an integer id (pg_name) and its ranks.
struct ChakraGroup {
  int id = 0;
  std::string comm;  ///< commprof's name ("dp0", "tp1", "pp0")
  int comm_size = 0;
  std::vector<int> ranks;  ///< the ranks whose ops name it in the step, ascending
};

/// How the network's dimensions map communicator kinds (astra_network.hpp): the position of a
/// kind's dimension, for involved_dim; empty with one dimension.
struct ChakraDims {
  int count = 1;
  std::map<std::string, int> dim_of_kind;
};

struct ChakraRankTrace {
  int rank = 0;
  std::vector<ChakraNode> nodes;
};

struct ChakraExport {
  int step = 0;
  std::vector<ChakraRankTrace> ranks;  ///< ranks 0..n-1
  std::vector<ChakraGroup> groups;     ///< ids 1..n, by name
  // What became what, over every rank.
  std::int64_t comp_nodes = 0, mem_as_comp = 0, comm_as_comp = 0, coll_nodes = 0, send_nodes = 0,
               recv_nodes = 0;
  std::int64_t zero_us = 0;         ///< nodes whose duration rounded to 0 µs
  std::int64_t unmatched_coll = 0;  ///< collective ops the graph did not match across ranks
  std::int64_t raised_size = 0;     ///< collective nodes given a larger member's comm_size
  std::int64_t ops_with_waits = 0;  ///< the graph's (0: stream order alone)
  std::vector<std::string> notes;   ///< groups whose ranks the step does not show in full, ...
};

/// The Chakra traces of `g` (one measured step). Throws Error when the step lacks a rank of
/// 0..n-1, or when a point-to-point op has neither its peers (send_to, recv_from) nor a name
/// that says which way it goes (commprof's pipeline transfers: send_act, recv_act, send_grad,
/// recv_grad).
ChakraExport chakra_export(const StepGraph& g, const ChakraDims& dims = {});

/// One rank's file: GlobalMetadata (version, producer, rank, step), then its nodes, each
/// message preceded by its length as a varint.
std::string encode_chakra_trace(const ChakraExport& e, const ChakraRankTrace& rank,
                                const std::string& producer);

/// What the traces cannot say, one line each (the export's note file, the command's output and
/// docs/analysis.md say the same).
const std::vector<std::string>& chakra_losses();

}  // namespace commprof
