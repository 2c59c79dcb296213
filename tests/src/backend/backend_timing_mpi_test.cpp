// SPDX-License-Identifier: MIT
// The Backend contract (backend_conformance.hpp): how ops are timed. Stamps within a stream,
// epochs, activity spans against the stamps around their op, and ops that last a set time
// (ComputeCall, idle_for).
#include <gtest/gtest.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "src/backend/backend_conformance.hpp"

namespace commprof::test {
namespace {

// CPU time of this process, every thread's (ns). The host backend's timed ops spin on the
// steady clock until their end, so the CPU time they use is at most their wall time: a loaded
// machine that deschedules a stream's thread makes it smaller, never larger. An upper bound on
// it holds on any load, where one on wall time cannot.
std::int64_t process_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

TEST_F(BackendConformance, StampsAreNonDecreasingWithinAStream) {
  Buffer data = constant(1024, 1.0);
  Buffer sum = constant(1024, 0.0);
  Buffer scratch = constant(1024, 1.0);
  std::vector<StampId> comm, mem;
  b().begin_epoch();
  for (int i = 0; i < 20; ++i) {
    comm.push_back(b().stamp(Category::kComm));
    b().submit(Category::kComm,
               CollectiveCall{CollectiveKind::kAllReduce, &b().world(), data.data(), sum.data(),
                              1024, DType::kFloat32, 0},
               {"allreduce", 4096});
    mem.push_back(b().stamp(Category::kMem));
    b().submit(Category::kMem, MemsetCall{scratch.data(), 0, 4096}, {"set"});
  }
  b().synchronize();
  for (const auto* ids : {&comm, &mem}) {
    for (std::size_t i = 1; i < ids->size(); ++i) {
      EXPECT_LE(b().stamp_ns((*ids)[i - 1]), b().stamp_ns((*ids)[i]));
    }
    EXPECT_GE(b().stamp_ns(ids->front()), 0);
  }
  EXPECT_EQ(mismatches(sum.data(), 1024, size()), 0u);
}

TEST_F(BackendConformance, BeginEpochMovesTheOriginPastTheOldStamps) {
  OnesGemm gemm;
  b().begin_epoch();
  const std::int64_t origin1 = b().epoch_origin_host_ns();
  b().submit(Category::kComp, gemm.call(), {"gemm"});
  const StampId late = b().stamp(Category::kComp);
  b().synchronize();
  const std::int64_t late_ns = b().stamp_ns(late);
  EXPECT_GT(late_ns, 0);
  b().begin_epoch();
  EXPECT_GE(b().epoch_origin_host_ns(), origin1 + late_ns)
      << "the new origin is not after the old epoch's stamps";
  const StampId first = b().stamp(Category::kComm);
  b().synchronize();
  EXPECT_GE(b().stamp_ns(first), 0);
}

TEST_F(BackendConformance, ActivitySpansLieInsideTheStampsAroundTheirOp) {
  ActivityRecorder* recorder = b().activity();
  if (recorder == nullptr) {
    GTEST_SKIP() << "no activity records here: " << b().unavailable_reason(Capability::kActivity);
  }
  OnesGemm gemm;
  Buffer scratch = constant(4096, 1.0);
  b().begin_epoch();
  OpLabel g{"gemm"};
  g.activity_tag = 7;
  OpLabel m{"set"};
  m.activity_tag = 8;
  const StampId before = b().stamp(Category::kComp);
  b().submit(Category::kComp, gemm.call(), g);
  const StampId between = b().stamp(Category::kComp);
  b().submit(Category::kComp, MemsetCall{scratch.data(), 0, 4096 * 4}, m);
  const StampId after = b().stamp(Category::kComp);
  b().synchronize();
  const auto gs = recorder->span(7);
  const auto ms = recorder->span(8);
  ASSERT_TRUE(gs.has_value());
  ASSERT_TRUE(ms.has_value());
  // Records and stamps are two reads of the device's time: CUPTI interpolates GPU timestamps onto
  // the host clock, events read the GPU clock from an origin taken with idle streams; they agree
  // to microseconds (the host backend's both read one clock: exact there, tests in host/).
  const std::int64_t slack_ns = 20000;
  EXPECT_GE(gs->start_ns, b().stamp_ns(before) - slack_ns);
  EXPECT_LT(gs->start_ns, gs->end_ns);
  EXPECT_LE(gs->end_ns, b().stamp_ns(between) + slack_ns);
  EXPECT_GE(ms->start_ns, b().stamp_ns(between) - slack_ns);
  EXPECT_LE(ms->start_ns, ms->end_ns);
  EXPECT_LE(ms->end_ns, b().stamp_ns(after) + slack_ns);
  EXPECT_LE(gs->end_ns, ms->start_ns + slack_ns) << "the memset ran before the GEMM it follows";
  EXPECT_FALSE(recorder->span(9).has_value()) << "no op had tag 9";
  EXPECT_EQ(mismatches(gemm.c.data(), OnesGemm::kElems, OnesGemm::kDim), 0u);
}

// ComputeCall runs about as long as it asks (the host: at least that long, by its clock, and no
// longer on CPU time; a GPU: from its measured rate, on an otherwise idle device), and in order
// with the stream's other work.
TEST_F(BackendConformance, ComputeLastsAboutItsSetTime) {
  ActivityRecorder* recorder = b().activity();
  if (recorder == nullptr) {
    GTEST_SKIP() << "no activity records here: " << b().unavailable_reason(Capability::kActivity);
  }
  Buffer scratch = constant(4096, 1.0);
  b().begin_epoch();
  const std::uint64_t wanted_ns[] = {200'000, 2'000'000, 8'000'000};
  const std::int64_t cpu_before = process_cpu_ns();
  std::uint64_t tag = 20;
  for (std::uint64_t ns : wanted_ns) {
    OpLabel label{"compute"};
    label.activity_tag = ++tag;
    b().submit(Category::kComp, ComputeCall{ns}, label);
  }
  OpLabel after{"set after"};
  after.activity_tag = ++tag;
  b().submit(Category::kComp, MemsetCall{scratch.data(), 0, 4096 * 4}, after);
  b().synchronize();
  if (b().name() == std::string("host")) {
    // No longer than asked where it cannot be descheduled: on CPU time (10.2 ms asked; the
    // memset, the submitting thread and the sanitizers' own threads well within the margin).
    const std::int64_t cpu = process_cpu_ns() - cpu_before;
    EXPECT_LE(cpu, 10'200'000 * 5 / 4 + 1'000'000) << "CPU time of the three ComputeCalls";
    std::printf("ComputeCall of 10.2 ms in all: %.2f ms of CPU time\n",
                static_cast<double>(cpu) / 1e6);
  }
  std::int64_t previous_end = 0;
  for (std::size_t i = 0; i <= std::size(wanted_ns); ++i) {
    const auto span = recorder->span(21 + i);
    ASSERT_TRUE(span.has_value()) << "no record of op " << i;
    EXPECT_GE(span->start_ns, previous_end) << "op " << i << " overlaps the one before";
    previous_end = span->end_ns;
    if (i == std::size(wanted_ns)) break;
    const double took = static_cast<double>(span->end_ns - span->start_ns);
    const double ns = static_cast<double>(wanted_ns[i]);
    // The host backend reads the clock it is timed by: never shorter. A GPU's kernel length is
    // set from the rate measured at start-up, to within a few percent on an idle device.
    EXPECT_GE(took, b().name() == std::string("host") ? ns : 0.8 * ns) << "op " << i;
    if (b().name() != std::string("host")) {
      EXPECT_LE(took, 1.25 * ns) << "op " << i;
    }
  }
  EXPECT_EQ(mismatches(scratch.data(), 4096, 0.0), 0u);
}

// idle_for holds the stream for the time asked (a replayed gap of a traced step), and on a GPU for
// not much longer, even for gaps of a few microseconds (ten of 5 µs).
TEST_F(BackendConformance, IdleForHoldsTheStreamForItsTime) {
  ActivityRecorder* recorder = b().activity();
  if (recorder == nullptr) {
    GTEST_SKIP() << "no activity records here: " << b().unavailable_reason(Capability::kActivity);
  }
  // Threads of a loaded CPU may be descheduled: no upper bound on the host's wall time (one on
  // its CPU time instead).
  const bool host = b().name() == std::string("host");
  b().begin_epoch();
  if (host) {
    // On CPU time (see process_cpu_ns), which descheduling never lengthens: 2 ms asked.
    const std::int64_t cpu_before = process_cpu_ns();
    b().idle_for(Category::kComp, 2'000'000);
    b().synchronize();
    const std::int64_t cpu = process_cpu_ns() - cpu_before;
    EXPECT_LE(cpu, 2'000'000 * 5 / 4 + 500'000) << "CPU time of idle_for(2 ms)";
    std::printf("idle_for(2 ms): %.2f ms of CPU time\n", static_cast<double>(cpu) / 1e6);
  }
  const std::uint64_t first_tag = 40;
  std::uint64_t tag = first_tag;
  auto compute = [&] {
    OpLabel label{"compute"};
    label.activity_tag = tag++;
    b().submit(Category::kComp, ComputeCall{100'000}, label);
  };
  const std::uint64_t waits_ns[] = {200'000, 1'000'000};
  compute();
  for (std::uint64_t ns : waits_ns) {
    b().idle_for(Category::kComp, ns);
    compute();
  }
  const int short_waits = 10;
  for (int i = 0; i < short_waits; ++i) {
    b().idle_for(Category::kComp, 5'000);
    compute();
  }
  b().synchronize();
  auto gap_before = [&](std::uint64_t op) -> std::int64_t {
    const auto before = recorder->span(first_tag + op - 1);
    const auto after = recorder->span(first_tag + op);
    if (!before || !after) return -1;
    return after->start_ns - before->end_ns;
  };
  for (std::size_t i = 0; i < std::size(waits_ns); ++i) {
    const std::int64_t gap = gap_before(i + 1);
    const auto ns = static_cast<std::int64_t>(waits_ns[i]);
    ASSERT_GE(gap, 0) << "no record around wait " << i;
    EXPECT_GE(gap, host ? ns : ns * 98 / 100) << "wait " << i;
    if (!host) {
      EXPECT_LE(gap, ns + 20'000) << "wait " << i;
    }
    std::printf("idle_for(%.0f us): the stream idled %.1f us\n", static_cast<double>(ns) / 1e3,
                static_cast<double>(gap) / 1e3);
  }
  std::int64_t total = 0;
  for (int i = 0; i < short_waits; ++i) {
    const std::int64_t gap = gap_before(std::size(waits_ns) + 1 + i);
    ASSERT_GE(gap, 0) << "no record around short wait " << i;
    total += gap;
  }
  if (host) {
    EXPECT_GE(total, short_waits * 5'000);
  } else {
    EXPECT_LE(total, short_waits * 5'000 + 100'000);
  }
  std::printf("%d idle_for(5 us): the stream idled %.1f us in all\n", short_waits,
              static_cast<double>(total) / 1e3);
}

}  // namespace
}  // namespace commprof::test
