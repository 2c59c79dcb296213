// SPDX-License-Identifier: MIT
// The import's main pass over one export: GPU activities in launch order, with commprof's NVTX op
// ranges merged in as the launches pass them; a per-thread stack of open ranges gives the
// innermost range around each launch. A launch inside commprof's op range R joins the op of R
// (one op per range, spanning its activities, as commprof times it); any other activity is an op
// named by its kernel. Steps are found by time containment of the launch in the step ranges.
// Classification runs when a step is handed on, once every stream's marks (which commprof
// categories launched work onto it) are known: a commprof trace is read twice, first for marks.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/nsys/nsys_domain.hpp"
#include "analysis/nsys/nsys_import_types.hpp"
#include "analysis/nsys/nsys_schema.hpp"

namespace commprof::nsys {

/// "dp.bucket0.allreduce" -> ("allreduce", "dp"); ("", "") when no part names a collective.
std::pair<std::string, std::string> collective_of_op_name(const std::string& name);

/// What one export's activities become: steps of ops, handed to `on_step` one at a time.
/// Memory is bounded by one step's ops plus the distinct kernel names and streams.
class ActivityCorrelator {
 public:
  ActivityCorrelator(Db& db, const RuleSet& rules, const NsysSchema& schema,
                     const CommprofDomain& domain, const std::vector<StepRange>& steps,
                     std::int64_t shift, int world_size, const RankTimeline& header,
                     NsysFileSummary& summary, const NsysStepSink& on_step);
  /// Reads the export (twice for a commprof trace) and hands on every step.
  void run();

 private:
  struct OpenRange;
  struct PendingOp;
  struct ActKey {
    ActivityKind kind;
    std::uint32_t name;  ///< index into names_
    std::int64_t stream;
    bool operator==(const ActKey& o) const {
      return kind == o.kind && name == o.name && stream == o.stream;
    }
  };
  struct ActKeyHash {
    std::size_t operator()(const ActKey& k) const {
      return std::hash<std::int64_t>()(k.stream * 1000003 + k.name * 4 + static_cast<int>(k.kind));
    }
  };
  class Pass;

  std::uint32_t intern(const std::string& name);
  std::uint32_t key_of(ActivityKind kind, const std::string& name, std::int64_t stream);
  RuleClass classify_key(std::uint32_t k, std::optional<Category> range);
  void finish_step(const StepRange& range, std::vector<PendingOp>& ops, std::int64_t last_end);

  Db& db_;
  const RuleSet& rules_;
  const NsysSchema& schema_;
  const CommprofDomain& domain_;
  const std::vector<StepRange>& steps_;
  const std::int64_t shift_;
  const int world_size_;
  const RankTimeline& header_;
  NsysFileSummary& sum_;
  const NsysStepSink& on_step_;
  // Across both passes; bounded by distinct names and streams.
  std::unordered_map<std::int64_t, std::uint8_t> stream_marks_;
  std::unordered_map<std::string, std::uint32_t> name_index_;
  std::vector<std::string> names_;
  std::unordered_map<ActKey, std::uint32_t, ActKeyHash> key_index_;
  std::vector<ActKey> keys_;
  std::vector<std::array<std::int8_t, 4>> key_class_;  // by range category (0: none); -1 unknown
  std::unordered_map<std::int64_t, std::int64_t> stream_seq_;  // foreign collectives
};

}  // namespace commprof::nsys
