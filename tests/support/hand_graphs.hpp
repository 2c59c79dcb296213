// SPDX-License-Identifier: MIT
// The step graph of hand-built rank timelines (hand_timelines.hpp), and its critical path's
// segments spelled out: for the tests of the graph and its path (tests/analysis/graph) and of
// its replay and what-if (tests/workloads/prediction), which work their answers out by hand.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/graph/critical_path.hpp"
#include "analysis/graph/critical_report.hpp"
#include "analysis/graph/step_graph.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof::test {

/// The one step of `ranks` as a completed graph (a test fails if they hold more steps).
inline StepGraph graph_of(const std::vector<RankTimeline>& ranks) {
  StepGraphBuilder b;
  for (const RankTimeline& t : ranks) b.add(t);
  std::vector<StepGraph> graphs = b.finish();
  EXPECT_EQ(graphs.size(), 1u);
  return graphs.at(0);
}

/// A path's segments in time order, each as "rank:category:name" (the category "gap" for a host
/// gap before its op) with its length.
using Segments = std::vector<std::pair<std::string, std::int64_t>>;
inline Segments described(const StepGraph& g, const CriticalPath& p) {
  Segments out;
  for (const PathSegment& s : p.segments) {
    const GraphOp& o = g.ops[static_cast<std::size_t>(s.op)];
    out.emplace_back(std::to_string(o.rank) + ":" + segment_category(g, s) + ":" + o.name,
                     s.length_ns());
  }
  return out;
}

}  // namespace commprof::test
