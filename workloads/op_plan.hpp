// SPDX-License-Identifier: MIT
// An op plan: one rank's step as plain data. Ops in one list; each runs on its category's
// stream in list order, and waits for the ops named in `deps` on other streams (events). The
// executor runs any plan on any backend; `commprof run --dry-run` prints it; tests read it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "src/backend/collective_kind.hpp"
#include "src/timeline/category.hpp"
#include "src/backend/work.hpp"
#include "src/core/dtype.hpp"

namespace commprof {

/// The communicator an op runs on, resolved by the executor from the rank's layout.
enum class Group : std::uint8_t { kNone, kTp, kDp, kPp };
const char* group_name(Group g);

enum class PlannedKind : std::uint8_t { kGemm, kCollective, kP2P, kCopy, kAxpy };

struct PlannedOp {
  int id = 0;
  std::string name;
  Category stream = Category::kComp;
  PlannedKind kind = PlannedKind::kGemm;
  int m = 0, n = 0, k = 0;                                 ///< GEMM
  CollectiveKind collective = CollectiveKind::kAllReduce;  ///< collective
  Group group = Group::kNone;                              ///< collective, P2P
  std::uint64_t count = 0;  ///< elements: NCCL's count (collective), per direction (P2P), axpy
  int send_peer = -1;       ///< P2P: rank within the group, or -1
  int recv_peer = -1;
  CopyKind copy = CopyKind::kDeviceToDevice;  ///< copy
  std::uint64_t bytes = 0;  ///< S of the busbw formula (collective); bytes moved otherwise
  double flops = 0.0;
  std::vector<int> deps;  ///< ops on other streams that must finish first
};

struct OpPlan {
  DType dtype = DType::kFloat32;
  std::vector<PlannedOp> ops;

  /// Appends `op` with the next id and returns it. Dependencies on the op's own stream are
  /// dropped (streams run in order), and of several on one stream only the latest is kept.
  int add(PlannedOp op, const std::vector<int>& deps);
  int gemm(const std::string& name, int m, int n, int k, const std::vector<int>& deps);
  int collective(const std::string& name, CollectiveKind kind, Group group, std::uint64_t count,
                 std::uint64_t bytes, const std::vector<int>& deps);
  int p2p(const std::string& name, Group group, int send_peer, int recv_peer, std::uint64_t count,
          const std::vector<int>& deps);
  int copy(const std::string& name, CopyKind kind, std::uint64_t bytes,
           const std::vector<int>& deps);
  int axpy(const std::string& name, std::uint64_t count, const std::vector<int>& deps);

  /// Ops of one kind, for tests and summaries.
  std::vector<const PlannedOp*> of_kind(PlannedKind kind) const;
};

/// The same ops, each also waiting for the one before it: every category serialised, the
/// baseline overlap is measured against (--no-overlap).
OpPlan serialized(const OpPlan& plan);

/// One line per op: id, stream, name, shape or size, dependencies.
void print_plan(std::ostream& os, const OpPlan& plan);

}  // namespace commprof
