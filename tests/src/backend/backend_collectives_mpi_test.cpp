// SPDX-License-Identifier: MIT
// The Backend contract (backend_conformance.hpp): every collective on the world and on a split
// communicator, verified exactly against the collective's spec
// (src/collective/collective_spec.hpp), alltoallv with the counts of a skewed MoE routing, and the
// uneven all-gather and reduce-scatter against the tests' collective model
// (tests/support/collective_model.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "collectives/alltoallv_layout.hpp"
#include "src/backend/backend_conformance.hpp"
#include "src/collective/collective_spec.hpp"
#include "support/collective_model.hpp"

namespace commprof::test {
namespace {

// Every collective on the world and on a split communicator of the even or odd ranks, ordered by
// descending world rank (key = -rank), verified exactly with the spec's data.
TEST_F(BackendConformance, EveryCollectiveVerifiesOnWorldAndSplit) {
  const int color = rank() % 2;
  std::unique_ptr<Communicator> parity = b().world().split(color, -rank(), "parity");
  int members = 0;
  int before_me = 0;  // members with a higher world rank come first
  for (int r = color; r < size(); r += 2) {
    ++members;
    if (r > rank()) ++before_me;
  }
  EXPECT_EQ(parity->size(), members);
  EXPECT_EQ(parity->rank(), before_me);
  EXPECT_EQ(parity->name(), "parity");
  const FillPattern poison{FillKind::kConstant, 0, 0, 1, 0, -7.0};
  std::uint64_t seed = 0;
  for (Communicator* comm : {&b().world(), parity.get()}) {
    const int n = comm->size();
    for (CollectiveKind kind : all_collective_kinds()) {
      const CollectiveSpec& spec = collective_spec(kind);
      SCOPED_TRACE(std::string(spec.name) + " on " + comm->name());
      const CollectiveSizes sz = spec.sizes(64 * 1024, DType::kFloat32, n);
      ++seed;
      Buffer send = b().allocate(sz.send_count * 4, MemorySpace::kDevice);
      Buffer recv = b().allocate(sz.recv_count * 4, MemorySpace::kDevice);
      b().fill(send.data(), DType::kFloat32, sz.send_count,
               spec.input(comm->rank(), n, DType::kFloat32, seed));
      b().fill(recv.data(), DType::kFloat32, sz.recv_count, poison);
      b().submit(Category::kComm,
                 CollectiveCall{kind, comm, send.data(), recv.data(), sz.count, DType::kFloat32, 0},
                 {spec.name, sz.bytes});
      b().synchronize();
      if (spec.output_defined(comm->rank(), 0)) {
        EXPECT_EQ(
            b().count_mismatches(recv.data(), DType::kFloat32, sz.recv_count,
                                 spec.expected(comm->rank(), n, 0, DType::kFloat32, seed, sz)),
            0u);
      }
    }
  }
}

// alltoallv with counts from a skewed routing (12 experts: they divide among 1, 2 and 4 ranks) on
// the world and on the split communicator, each peer's block verified against its pattern.
TEST_F(BackendConformance, AlltoallvVerifiesOnWorldAndSplit) {
  std::unique_ptr<Communicator> parity = b().world().split(rank() % 2, -rank(), "parity");
  MoeShape shape;
  shape.experts = 12;
  shape.top_k = 3;
  shape.hidden = 5;
  const Routing routing(parse_routing("zipf:1"), shape.experts);
  const FillPattern poison{FillKind::kConstant, 0, 0, 1, 0, -7.0};
  std::uint64_t seed = 100;
  for (Communicator* comm : {&b().world(), parity.get()}) {
    SCOPED_TRACE("alltoallv on " + comm->name());
    const int n = comm->size();
    const int me = comm->rank();
    const AllToAllvLayout layout(routing, shape, n, 300);
    auto splits = std::make_shared<PeerSplits>();
    for (int p = 0; p < n; ++p) {
      splits->send_counts.push_back(layout.elements(me, p));
      splits->send_displs.push_back(layout.send_offset(me, p));
      splits->recv_counts.push_back(layout.elements(p, me));
      splits->recv_displs.push_back(layout.recv_offset(me, p));
    }
    ++seed;
    Buffer send = b().allocate(layout.send_total(me) * 4, MemorySpace::kDevice);
    Buffer recv =
        b().allocate(std::max<std::uint64_t>(layout.recv_total(me), 1) * 4, MemorySpace::kDevice);
    b().fill(send.data(), DType::kFloat32, layout.send_total(me),
             layout.input(me, DType::kFloat32, seed));
    b().fill(recv.data(), DType::kFloat32, layout.recv_total(me), poison);
    CollectiveCall call{CollectiveKind::kAllToAllV,
                        comm,
                        send.data(),
                        recv.data(),
                        layout.send_total(me),
                        DType::kFloat32,
                        0};
    call.splits = splits;
    b().submit(Category::kComm, call, {"alltoallv", layout.sizes(DType::kFloat32).bytes});
    b().synchronize();
    for (int source = 0; source < n; ++source) {
      EXPECT_EQ(b().count_mismatches(
                    static_cast<const char*>(recv.data()) + layout.recv_offset(me, source) * 4,
                    DType::kFloat32, layout.elements(source, me),
                    layout.expected(me, source, DType::kFloat32, seed)),
                0u)
          << "block from rank " << source;
    }
  }
}

// Rank r's share of the uneven collectives below: unequal, and one rank's empty (an expert-TP rank
// that received no token).
std::size_t uneven_count(int r) { return r == 1 ? 0 : static_cast<std::size_t>(3 + 5 * r); }

// What rank `r` sends in the uneven collectives: element i of block p is r + 10·p + 100·i (block
// p: the allgatherv's share is block 0; the reducescatterv's block for rank p), exact in float.
std::vector<double> uneven_input(int r, const std::vector<std::size_t>& counts, bool blocks) {
  std::vector<double> out;
  for (std::size_t p = 0; p < (blocks ? counts.size() : 1); ++p) {
    const std::size_t n = blocks ? counts[p] : counts[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(r + 10.0 * static_cast<double>(p) + 100.0 * static_cast<double>(i));
    }
  }
  return out;
}

// The device buffer's first `count` floats, on the host.
std::vector<double> read_back(const Buffer& buf, std::size_t count) {
  Buffer host = BackendConformance::b().allocate(std::max<std::size_t>(count, 1) * 4,
                                                 MemorySpace::kHostPinned);
  BackendConformance::b().submit(
      Category::kMem, CopyCall{host.data(), buf.data(), count * 4, CopyKind::kDeviceToHost},
      {"d2h"});
  BackendConformance::b().synchronize();
  std::vector<double> out(count);
  const auto* f = static_cast<const float*>(host.data());
  for (std::size_t i = 0; i < count; ++i) out[i] = f[i];
  return out;
}

// allgatherv and reducescatterv (the MoE layer's gather and scatter over expert TP) with unequal
// counts, one of them zero, on the world and on the split communicator: every rank's result is
// the collective model's.
TEST_F(BackendConformance, UnevenAllgatherAndReduceScatterMatchTheModel) {
  std::unique_ptr<Communicator> parity = b().world().split(rank() % 2, -rank(), "parity");
  for (Communicator* comm : {&b().world(), parity.get()}) {
    const int n = comm->size();
    const int me = comm->rank();
    std::vector<std::size_t> counts;
    for (int r = 0; r < n; ++r) counts.push_back(uneven_count(r));
    std::size_t total = 0;
    for (const std::size_t c : counts) total += c;
    for (const CollectiveKind kind :
         {CollectiveKind::kAllGatherV, CollectiveKind::kReduceScatterV}) {
      const bool gather = kind == CollectiveKind::kAllGatherV;
      SCOPED_TRACE(std::string(collective_name(kind)) + " on " + comm->name());
      testing::RankBuffers sends;
      for (int r = 0; r < n; ++r) sends.push_back(uneven_input(r, counts, !gather));
      const std::vector<double>& mine = sends[static_cast<std::size_t>(me)];
      const std::size_t out_count = gather ? total : counts[static_cast<std::size_t>(me)];
      Buffer send =
          b().allocate(std::max<std::size_t>(mine.size(), 1) * 4, MemorySpace::kHostPinned);
      for (std::size_t i = 0; i < mine.size(); ++i) {
        static_cast<float*>(send.data())[i] = static_cast<float>(mine[i]);
      }
      Buffer dsend = b().allocate(std::max<std::size_t>(mine.size(), 1) * 4, MemorySpace::kDevice);
      b().submit(Category::kMem,
                 CopyCall{dsend.data(), send.data(), mine.size() * 4, CopyKind::kHostToDevice},
                 {"h2d"});
      Buffer recv = b().allocate(std::max<std::size_t>(out_count, 1) * 4, MemorySpace::kDevice);
      b().fill(recv.data(), DType::kFloat32, out_count,
               FillPattern{FillKind::kConstant, 0, 0, 1, 0, -7.0});
      b().synchronize();
      CollectiveCall call{kind,
                          comm,
                          dsend.data(),
                          recv.data(),
                          counts[static_cast<std::size_t>(me)],
                          DType::kFloat32,
                          0};
      call.splits = std::make_shared<PeerSplits>(gather ? uneven_gather_splits(counts, me)
                                                        : uneven_scatter_splits(counts, me));
      b().submit(Category::kComm, call, {collective_name(kind), total * 4});
      b().synchronize();
      const testing::RankBuffers model = gather ? testing::simulate_allgatherv(counts, sends)
                                                : testing::simulate_reduce_scatterv(counts, sends);
      EXPECT_EQ(read_back(recv, out_count), model[static_cast<std::size_t>(me)]);
    }
  }
}

}  // namespace
}  // namespace commprof::test
