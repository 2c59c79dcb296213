// SPDX-License-Identifier: MIT
#include "collectives/bench/bench.hpp"
#include "src/core/units.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "src/backend/annotation.hpp"
#include "src/backend/backend.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/runtime/gather.hpp"
#include "src/runtime/mpi_check.hpp"
#include "src/runtime/rank_context.hpp"

namespace commprof {
namespace {

std::string utc_now() { return utc_text(std::time(nullptr), "%Y-%m-%dT%H:%M:%SZ"); }

double host_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Poison written into receive buffers before the checked call: no expected value is negative,
// so an element the collective failed to write is counted as wrong.
constexpr double kPoison = -1.0;

struct Buffers {
  Buffer send;
  Buffer recv;
};

// The layout of one alltoallv size, or null where the size holds no whole token per rank.
std::shared_ptr<const AllToAllvLayout> alltoallv_layout(const BenchConfig& config,
                                                        const Routing& routing, int n,
                                                        std::uint64_t requested) {
  const std::uint64_t tokens = AllToAllvLayout::tokens_for(config.moe, requested, config.dtype);
  if (tokens == 0) return nullptr;
  return std::make_shared<const AllToAllvLayout>(routing, config.moe, n, tokens);
}

// Elements this rank sends and receives in one call: an alltoallv's own split, else the spec's.
struct LocalCounts {
  std::uint64_t send = 0;
  std::uint64_t recv = 0;
};
LocalCounts local_counts(const CollectiveSizes& sizes, const AllToAllvLayout* layout, int me) {
  if (layout != nullptr) return {layout->send_total(me), layout->recv_total(me)};
  return {sizes.send_count, sizes.recv_count};
}

Buffers allocate_for(const BenchConfig& config, Backend& backend, const Routing& routing, int n,
                     int me, const std::vector<std::uint64_t>& sizes) {
  std::uint64_t send_elems = 0;
  std::uint64_t recv_elems = 0;
  for (CollectiveKind op : config.ops) {
    for (std::uint64_t bytes : sizes) {
      LocalCounts counts;
      if (op == CollectiveKind::kAllToAllV) {
        const auto layout = alltoallv_layout(config, routing, n, bytes);
        if (layout) counts = local_counts({}, layout.get(), me);
      } else {
        counts = local_counts(collective_spec(op).sizes(bytes, config.dtype, n), nullptr, me);
      }
      send_elems = std::max(send_elems, counts.send);
      recv_elems = std::max(recv_elems, counts.recv);
    }
  }
  const std::size_t elem = dtype_size(config.dtype);
  return {backend.allocate(std::max<std::uint64_t>(send_elems, 1) * elem, MemorySpace::kDevice),
          backend.allocate(std::max<std::uint64_t>(recv_elems, 1) * elem, MemorySpace::kDevice)};
}

double mean(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

CollectiveCall shifted(const CollectiveCall& call, std::uint64_t offset) {
  CollectiveCall out = call;
  out.send = static_cast<const char*>(call.send) + offset;
  out.recv = static_cast<char*>(call.recv) + offset;
  return out;
}

// Submits one call labelled with its communicator's next sequence number, so a timeout or an
// NCCL error names exactly which call it was.
void submit_call(Backend& backend, const CollectiveCall& call, const OpLabel& label) {
  OpLabel numbered = label;
  numbered.seq = static_cast<std::int64_t>(call.comm->next_sequence());
  backend.submit(Category::kComm, call, numbered);
}

enum class PerCall { kNone, kStamps, kActivity };

struct LoopTiming {
  double time_us = 0;       // per call, from the two stamps around the loop
  double host_time_us = 0;  // per call, host clock from first enqueue to completion
  double iter_min_us = 0;   // fastest single call (per-op stamps), else time_us
  double iter_max_us = 0;
};

// One timed loop of `iters` back-to-back calls on the COMM stream, in its own epoch. With
// per-call stamps, consecutive calls share their boundary stamp: one event per call instead of
// two, since every event between two NCCL kernels keeps the GPU from overlapping the next
// launch with the previous kernel's tail (measured in docs/BENCHMARKS.md).
//
// Like nccl-tests, call i works on buffers shifted by i mod `positions` whole call sizes
// (`shift_bytes` each), so back-to-back calls do not find their data in the GPU's L2 cache.
//
// With per-call activity timing, each call carries a tag instead and its time is its kernels'.
// With a graph, the calls are captured once, replayed once untimed, and the stamps go around a
// second replay (nccl-tests' -G 1).
LoopTiming time_loop(Backend& backend, const CollectiveCall& call, const OpLabel& label, int iters,
                     PerCall per_call, std::uint64_t shift_bytes, std::uint64_t positions,
                     bool graph) {
  static std::uint64_t next_tag = 1;  // unique over the run: stale records never match
  const bool per_call_stamps = per_call == PerCall::kStamps;
  const auto submit_calls = [&] {
    for (int i = 0; i < iters; ++i) {
      submit_call(backend, shifted(call, shift_bytes * (static_cast<std::uint64_t>(i) % positions)),
                  label);
    }
  };
  if (graph) {
    GraphCapture& graphs = *backend.graphs();  // run_bench refused --graph without
    graphs.begin_capture(Category::kComm);
    submit_calls();
    const std::unique_ptr<Graph> g = graphs.end_capture(Category::kComm);
    graphs.replay(Category::kComm, *g);
    backend.begin_epoch();  // waits for the untimed replay
    const double host_t0 = host_seconds();
    const StampId t0 = backend.stamp(Category::kComm);
    graphs.replay(Category::kComm, *g);
    const StampId t1 = backend.stamp(Category::kComm);
    backend.synchronize();
    LoopTiming t;
    t.host_time_us = (host_seconds() - host_t0) * 1e6 / iters;
    t.time_us = static_cast<double>(backend.stamp_ns(t1) - backend.stamp_ns(t0)) / 1e3 / iters;
    return t;
  }
  backend.begin_epoch();
  std::vector<StampId> boundaries;
  std::vector<std::uint64_t> tags;
  const double host_t0 = host_seconds();
  boundaries.push_back(backend.stamp(Category::kComm));
  for (int i = 0; i < iters; ++i) {
    OpLabel tagged = label;
    if (per_call == PerCall::kActivity) {
      tagged.activity_tag = next_tag++;
      tags.push_back(tagged.activity_tag);
    }
    submit_call(backend, shifted(call, shift_bytes * (static_cast<std::uint64_t>(i) % positions)),
                tagged);
    if (per_call_stamps && i + 1 < iters) boundaries.push_back(backend.stamp(Category::kComm));
  }
  boundaries.push_back(backend.stamp(Category::kComm));
  backend.synchronize();
  const double host_t1 = host_seconds();

  LoopTiming t;
  const std::int64_t first = backend.stamp_ns(boundaries.front());
  t.time_us = static_cast<double>(backend.stamp_ns(boundaries.back()) - first) / 1e3 / iters;
  t.host_time_us = (host_t1 - host_t0) * 1e6 / iters;
  t.iter_min_us = t.iter_max_us = 0.0;
  if (per_call_stamps) {
    for (std::size_t i = 0; i + 1 < boundaries.size(); ++i) {
      const double us = static_cast<double>(backend.stamp_ns(boundaries[i + 1]) -
                                            backend.stamp_ns(boundaries[i])) /
                        1e3;
      t.iter_min_us = i == 0 ? us : std::min(t.iter_min_us, us);
      t.iter_max_us = i == 0 ? us : std::max(t.iter_max_us, us);
    }
  }
  for (std::size_t i = 0; i < tags.size(); ++i) {
    const std::optional<ActivitySpan> span = backend.activity()->span(tags[i]);
    if (!span) {
      throw DeviceError(log::cat("no device activity was recorded for ", label.name, " call ", i,
                                 " of the timed loop on ", log::identity()));
    }
    const double us = static_cast<double>(span->end_ns - span->start_ns) / 1e3;
    t.iter_min_us = i == 0 ? us : std::min(t.iter_min_us, us);
    t.iter_max_us = i == 0 ? us : std::max(t.iter_max_us, us);
  }
  return t;
}

PerCall per_call_of(Instrument i) {
  switch (i) {
    case Instrument::kOn:
    case Instrument::kCompare:
      return PerCall::kStamps;
    case Instrument::kActivity:
    case Instrument::kActivityEvery:
    case Instrument::kCompareActivity:
      return PerCall::kActivity;
    case Instrument::kOff:
      break;
  }
  return PerCall::kNone;
}

bool compares(Instrument i) {
  return i == Instrument::kCompare || i == Instrument::kCompareActivity;
}

}  // namespace

Instrument parse_instrument(const std::string& text) {
  if (text == "0" || text == "off" || text == "false") return Instrument::kOff;
  if (text == "1" || text == "on" || text == "true") return Instrument::kOn;
  if (text == "activity") return Instrument::kActivity;
  if (text == "activity-every") return Instrument::kActivityEvery;
  if (text == "both") return Instrument::kCompare;
  if (text == "activity-both") return Instrument::kCompareActivity;
  throw ConfigError("invalid --instrument '" + text +
                    "': expected 0, 1, activity, activity-every, both or activity-both");
}

const char* instrument_name(Instrument i) {
  switch (i) {
    case Instrument::kOff:
      return "off";
    case Instrument::kOn:
      return "on";
    case Instrument::kActivity:
      return "activity";
    case Instrument::kActivityEvery:
      return "activity-every";
    case Instrument::kCompare:
      return "both";
    case Instrument::kCompareActivity:
      return "activity-both";
  }
  return "?";
}

bool uses_activity(Instrument i) {
  return i == Instrument::kActivity || i == Instrument::kActivityEvery ||
         i == Instrument::kCompareActivity;
}

std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                       std::uint64_t step_factor) {
  if (step_factor < 2) throw ConfigError("the size step factor must be at least 2");
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t b = std::max<std::uint64_t>(min_bytes, 1); b <= max_bytes; b *= step_factor) {
    sizes.push_back(b);
    if (b > max_bytes / step_factor) break;  // next step would overflow or pass max
  }
  return sizes;
}

PeerSplits peer_splits(const AllToAllvLayout& layout, int rank) {
  PeerSplits splits;
  for (int p = 0; p < layout.ranks(); ++p) {
    splits.send_counts.push_back(layout.elements(rank, p));
    splits.send_displs.push_back(layout.send_offset(rank, p));
    splits.recv_counts.push_back(layout.elements(p, rank));
    splits.recv_displs.push_back(layout.recv_offset(rank, p));
  }
  return splits;
}

double algbw_gbps(std::uint64_t bytes, double time_us) {
  return time_us > 0 ? static_cast<double>(bytes) / (time_us * 1e-6) / 1e9 : 0.0;
}

std::int64_t BenchReport::total_wrong() const {
  std::int64_t total = 0;
  for (const BenchRow& row : rows) total += std::max<std::int64_t>(row.wrong, 0);
  return total;
}

namespace {

// Every rank refuses a sweep this backend cannot run, with the reason, before anything runs.
void validate(const BenchConfig& config, Backend& backend, const RankContext& ctx, int n) {
  ctx.agree(backend.supports(config.dtype), std::string("the ") + backend.name() +
                                                " backend cannot run collectives on " +
                                                dtype_name(config.dtype));
  ctx.agree(config.root < n,
            log::cat("--root ", config.root, " is not a rank of a ", n, "-rank job"));
  if (uses_activity(config.instrument)) {
    ctx.agree(backend.activity() != nullptr,
              log::cat("--instrument ", instrument_name(config.instrument), " is unavailable on ",
                       log::identity(), ": ", backend.unavailable_reason(Capability::kActivity)));
  }
  if (std::find(config.ops.begin(), config.ops.end(), CollectiveKind::kAllToAllV) !=
      config.ops.end()) {
    ctx.agree(config.moe.experts % n == 0,
              log::cat("alltoallv: --experts ", config.moe.experts, " do not divide evenly among ",
                       n, " ranks: every rank holds as many experts"));
  }
  if (config.estimate) {
    ctx.agree(backend.cost_model() != nullptr,
              log::cat("--estimate is unavailable on ", log::identity(), ": ",
                       backend.unavailable_reason(Capability::kCostModel)));
  }
  if (config.graph) {
    ctx.agree(backend.graphs() != nullptr,
              log::cat("--graph is unavailable on ", log::identity(), ": ",
                       backend.unavailable_reason(Capability::kGraphs)));
  }
}

// Who ran the sweep: every rank's host, local rank and device (collective).
std::vector<BenchRankInfo> describe_ranks(Backend& backend, RankContext& ctx) {
  std::vector<BenchRankInfo> ranks;
  const auto devices = gather_strings(backend.device_description(), ctx.comm());
  const auto locals = gather_doubles(ctx.local_rank(), ctx.comm());
  for (std::size_t r = 0; r < devices.size(); ++r) {
    ranks.push_back({static_cast<int>(r), ctx.hosts()[r], static_cast<int>(locals[r]), devices[r]});
  }
  return ranks;
}

// One size of one collective, as the sweep runs it.
struct SizeCall {
  const CollectiveSpec& spec;
  CollectiveSizes sizes;
  CollectiveCall call;
  OpLabel label;
  std::uint64_t positions = 1;  ///< whole calls that fit in the buffers: nccl-tests' shift
  std::uint64_t seed = 0;
  std::shared_ptr<const AllToAllvLayout> layout;  ///< alltoallv only
};

// What timing one size gave on this rank.
struct SizeTiming {
  LoopTiming loop;
  double plain_us = 0;         ///< --instrument both / activity-both: fastest plain loop
  double instrumented_us = 0;  ///< ... and fastest instrumented one
};

SizeTiming time_size(const BenchConfig& config, Backend& backend, RankContext& ctx,
                     const SizeCall& c, bool annotate) {
  const PerCall per_call = per_call_of(config.instrument);
  for (int i = 0; i < config.warmup; ++i) {
    submit_call(backend,
                shifted(c.call, c.sizes.bytes * (static_cast<std::uint64_t>(i) % c.positions)),
                c.label);
  }
  backend.synchronize();
  ctx.barrier();  // every rank starts the timed loop together, as nccl-tests does
  ScopedAnnotation size_range(log::cat(c.spec.name, " ", c.sizes.bytes, " B"), c.sizes.bytes);

  SizeTiming t;
  // Sampled activity timing times the reported loop here, unrecorded (recording is paused until
  // every size has been timed: see run_bench); record_size() adds the recorded loop afterwards.
  const bool plain = compares(config.instrument) || config.instrument == Instrument::kActivity;
  t.loop = time_loop(backend, c.call, c.label, config.iters, plain ? PerCall::kNone : per_call,
                     c.sizes.bytes, c.positions, config.graph);
  t.plain_us = t.loop.time_us;
  if (compares(config.instrument)) {
    // Alternate plain and instrumented loops so drift (clocks, thermals) hits both alike; each
    // side keeps its fastest of three. Plain loops run with activity recording paused, so its
    // cost shows in the ratio.
    t.plain_us = t.instrumented_us = 1e300;
    for (int pass = 0; pass < 3; ++pass) {
      ctx.barrier();
      set_annotations_enabled(false);
      if (ActivityRecorder* a = backend.activity()) a->pause(true);
      t.plain_us = std::min(t.plain_us, time_loop(backend, c.call, c.label, config.iters,
                                                  PerCall::kNone, c.sizes.bytes, c.positions, false)
                                            .time_us);
      ctx.barrier();
      set_annotations_enabled(annotate);
      if (ActivityRecorder* a = backend.activity()) a->pause(false);
      t.instrumented_us =
          std::min(t.instrumented_us, time_loop(backend, c.call, c.label, config.iters, per_call,
                                                c.sizes.bytes, c.positions, false)
                                          .time_us);
    }
  }
  return t;
}

// Sampled activity timing's second pass, once every size has been timed unrecorded: one loop
// of the size with per-call activity records gives the single-call times and, against the
// unrecorded loop, what recording costs.
void record_size(const BenchConfig& config, Backend& backend, RankContext& ctx, const SizeCall& c,
                 SizeTiming& t) {
  for (int i = 0; i < config.warmup; ++i) submit_call(backend, c.call, c.label);
  backend.synchronize();
  ctx.barrier();
  const LoopTiming recorded = time_loop(backend, c.call, c.label, config.iters, PerCall::kActivity,
                                        c.sizes.bytes, c.positions, false);
  t.loop.iter_min_us = recorded.iter_min_us;
  t.loop.iter_max_us = recorded.iter_max_us;
  t.instrumented_us = recorded.time_us;
}

// One more call into a poisoned buffer, checked exactly: the wrong elements over all ranks
// (collective), or -1 with --check 0.
std::int64_t verify_size(const BenchConfig& config, Backend& backend, RankContext& ctx,
                         const Buffers& buffers, const SizeCall& c, int me, int n) {
  if (!config.check) return -1;
  std::int64_t wrong = 0;
  const LocalCounts counts = local_counts(c.sizes, c.layout.get(), me);
  backend.fill(buffers.recv.data(), config.dtype, counts.recv,
               FillPattern{FillKind::kConstant, 0, 0, 1, 0, kPoison});
  submit_call(backend, c.call, c.label);
  backend.synchronize();
  if (c.spec.output_defined(me, config.root)) {
    if (me == config.test_corrupt_rank) {
      backend.fill(buffers.recv.data(), config.dtype, 1,
                   FillPattern{FillKind::kConstant, 0, 0, 1, 0, -3.0});
    }
    if (c.layout) {
      // Each peer's block holds that peer's data from where its block for this rank started.
      const std::size_t elem = dtype_size(config.dtype);
      for (int source = 0; source < n; ++source) {
        wrong += static_cast<std::int64_t>(
            backend.count_mismatches(static_cast<const char*>(buffers.recv.data()) +
                                         c.layout->recv_offset(me, source) * elem,
                                     config.dtype, c.layout->elements(source, me),
                                     c.layout->expected(me, source, config.dtype, c.seed)));
      }
    } else {
      wrong = static_cast<std::int64_t>(backend.count_mismatches(
          buffers.recv.data(), config.dtype, counts.recv,
          c.spec.expected(me, n, config.root, config.dtype, c.seed, c.sizes)));
    }
  }
  if (wrong > 0) {
    log::warn(log::cat(c.spec.name, " of ", c.sizes.bytes, " B: ", wrong, " wrong elements"));
  }
  std::int64_t total = 0;
  COMMPROF_MPI_CHECK(MPI_Allreduce(&wrong, &total, 1, MPI_INT64_T, MPI_SUM, ctx.comm()));
  return total;
}

// The per-call figures of one size into `row` on rank 0 (collective): the fastest and slowest
// single call on any rank, and the mean over ranks of the instrumented loop's time.
void reduce_per_call(const BenchConfig& config, RankContext& ctx, const SizeTiming& t,
                     BenchRow& row, int me) {
  double extremes[2] = {-t.loop.iter_min_us, t.loop.iter_max_us};
  double reduced[2] = {0, 0};
  COMMPROF_MPI_CHECK(MPI_Reduce(extremes, reduced, 2, MPI_DOUBLE, MPI_MAX, 0, ctx.comm()));
  const std::vector<double> on_times = gather_doubles(t.instrumented_us, ctx.comm());
  if (me != 0) return;
  row.iter_min_us = -reduced[0];
  row.iter_max_us = reduced[1];
  if (compares(config.instrument) || config.instrument == Instrument::kActivity) {
    row.instrumented_time_us = mean(on_times);
  }
}

// The table row of one size: times reduced over ranks (collective), bandwidths on rank 0.
// Sampled activity timing has no per-call figures yet: its recorded loop adds them later.
BenchRow reduce_row(const BenchConfig& config, RankContext& ctx, const SizeCall& c,
                    const SizeTiming& t, std::int64_t wrong, int me, int n) {
  BenchRow row;
  row.op = c.spec.kind;
  row.nranks = n;
  row.busbw_factor = c.layout ? c.layout->busbw_factor() : c.spec.busbw_factor(n);
  if (c.layout) {
    row.imbalance = c.layout->imbalance();
    row.busiest_bytes = c.layout->busiest_offrank_bytes(config.dtype);
  }
  row.sizes = c.sizes;
  row.dtype = config.dtype;
  row.root = c.spec.rooted ? config.root : -1;
  row.wrong = wrong;
  row.rank_time_us = gather_doubles(t.loop.time_us, ctx.comm());
  const std::vector<double> host_times = gather_doubles(t.loop.host_time_us, ctx.comm());
  const std::vector<double> off_times = gather_doubles(t.plain_us, ctx.comm());
  if (config.instrument != Instrument::kActivity) reduce_per_call(config, ctx, t, row, me);
  if (me != 0) return row;
  const auto& times = row.rank_time_us;
  row.time_min_us = *std::min_element(times.begin(), times.end());
  row.time_max_us = *std::max_element(times.begin(), times.end());
  row.time_avg_us = mean(times);
  row.host_time_avg_us = mean(host_times);
  row.algbw_gbps = algbw_gbps(c.sizes.bytes, row.time_avg_us);
  row.busbw_gbps = row.algbw_gbps * row.busbw_factor;
  row.algbw_max_gbps = algbw_gbps(c.sizes.bytes, row.time_max_us);
  row.busbw_max_gbps = row.algbw_max_gbps * row.busbw_factor;
  if (compares(config.instrument) || config.instrument == Instrument::kActivity) {
    row.plain_time_us = mean(off_times);
  }
  return row;
}

}  // namespace

BenchReport run_bench(const BenchConfig& config, Backend& backend, RankContext& ctx,
                      const std::string& backend_reason, BenchProgress* progress) {
  return run_bench(config, backend, backend.world(), ctx, backend_reason, progress);
}

BenchReport run_bench(const BenchConfig& config, Backend& backend, Communicator& comm,
                      RankContext& ctx, const std::string& backend_reason,
                      BenchProgress* progress) {
  // Gathers and barriers below run on the MPI world, indexed by world rank.
  if (comm.size() != ctx.size() || comm.rank() != ctx.rank())
    throw std::logic_error("run_bench over a communicator that is not the world in its order");
  const int n = comm.size();
  const int me = comm.rank();
  validate(config, backend, ctx, n);

  BenchReport report;
  report.config = config;
  report.backend = backend.name();
  report.backend_reason = backend_reason;
  report.start_time = utc_now();
  report.ranks = describe_ranks(backend, ctx);
  if (config.estimate) report.cost_model = backend.cost_model()->model_name();
  if (progress != nullptr) progress->started(report);

  const std::vector<std::uint64_t> sizes =
      sweep_sizes(config.min_bytes, config.max_bytes, config.step_factor);
  // Every rank builds the same routing (a file is read on each): alltoallv's counts are a pure
  // function of it, so no rank needs another's.
  const Routing routing(config.routing, config.moe.experts);
  Buffers buffers = allocate_for(config, backend, routing, n, me, sizes);
  const std::size_t elem = dtype_size(config.dtype);
  // Shifted calls read beyond the verified inputs: give that memory defined values once.
  backend.fill(buffers.send.data(), config.dtype, buffers.send.bytes() / elem,
               FillPattern{FillKind::kConstant, 0, 0, 1, 0, 1.0});
  const bool annotate = annotations_enabled();
  std::uint64_t seed = 0;
  struct Swept {  // one per row of the report, in its order
    SizeCall call;
    SizeTiming timing;
  };
  std::vector<Swept> swept;
  if (config.instrument == Instrument::kActivity) backend.activity()->pause(true);

  for (CollectiveKind op : config.ops) {
    const CollectiveSpec& spec = collective_spec(op);
    for (std::uint64_t requested : sizes) {
      SizeCall c{spec, spec.sizes(requested, config.dtype, n), {}, {}, 1, 0, nullptr};
      if (op == CollectiveKind::kAllToAllV) {
        c.layout = alltoallv_layout(config, routing, n, requested);
        if (!c.layout) continue;  // not one whole token per rank
        c.sizes = c.layout->sizes(config.dtype);
        c.call.splits = std::make_shared<const PeerSplits>(peer_splits(*c.layout, me));
      }
      if (c.sizes.count == 0) continue;  // too small to divide among n ranks
      const LocalCounts counts = local_counts(c.sizes, c.layout.get(), me);
      c.seed = ++seed;
      c.call.kind = op;
      c.call.comm = &comm;
      c.call.send = buffers.send.data();
      c.call.recv = buffers.recv.data();
      c.call.count = c.layout ? counts.send : c.sizes.count;
      c.call.dtype = config.dtype;
      c.call.root = config.root;
      c.label = OpLabel{spec.name, c.sizes.bytes, 0.0};
      const std::uint64_t room = std::min(buffers.send.bytes() - counts.send * elem,
                                          buffers.recv.bytes() - counts.recv * elem);
      c.positions = 1 + room / c.sizes.bytes;

      backend.fill(buffers.send.data(), config.dtype, counts.send,
                   c.layout ? c.layout->input(me, config.dtype, c.seed)
                            : spec.input(me, n, config.dtype, c.seed));
      // Every rank asks, in the same order, before the warm-up: NCCL may connect the
      // algorithm it picks while simulating, which takes the whole communicator.
      std::optional<double> estimate_ns;
      if (config.estimate) estimate_ns = backend.cost_model()->estimate_ns(c.call);
      const SizeTiming timing = time_size(config, backend, ctx, c, annotate);
      const std::int64_t wrong = verify_size(config, backend, ctx, buffers, c, me, n);
      report.rows.push_back(reduce_row(config, ctx, c, timing, wrong, me, n));
      if (estimate_ns) report.rows.back().estimate_us = *estimate_ns / 1e3;
      swept.push_back({c, timing});
      if (progress != nullptr) progress->measured(report, report.rows.back());
    }
    if (progress != nullptr) progress->op_done(report, op);
  }
  if (config.instrument == Instrument::kActivity) {
    // Recording resumes only now, for one recorded loop per size: every reported loop above
    // ran with it paused (no activity kinds, no launch API records).
    backend.activity()->pause(false);  // validate() refused the bench without a recorder
    for (std::size_t i = 0; i < swept.size(); ++i) {
      record_size(config, backend, ctx, swept[i].call, swept[i].timing);
      reduce_per_call(config, ctx, swept[i].timing, report.rows[i], me);
    }
    if (progress != nullptr) progress->recorded(report);
  }
  report.end_time = utc_now();
  if (progress != nullptr) progress->finished(report);
  return report;
}

}  // namespace commprof
