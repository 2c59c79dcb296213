// SPDX-License-Identifier: MIT
#include "workloads/commands/mock_run.hpp"

#include <optional>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/runtime/clock_sync.hpp"
#include "src/runtime/stop_signals.hpp"
#include "src/timeline/rank_file_appender.hpp"
#include "workloads/commands/unfinished_record.hpp"
#include "workloads/execution/executor.hpp"

namespace commprof {
namespace {

// After a step timed out, how long a rank waits for its peers to record theirs before the job
// ends (seconds).
constexpr double kRecordGraceS = 1.0;

}  // namespace

MockRunResult run_mock(RankContext& ctx, Backend& backend, const MockRun& run) {
  const ParallelLayout& layout = run.workload.layout;
  const RankPlace place = place_rank(layout, ctx.rank());
  // Every rank splits the world three times, in the same order (the splits are collective).
  Communicator& world = backend.world();
  auto tp = world.split(place.tp_group_id, place.tp_rank, log::cat("tp", place.tp_group_id));
  auto dp =
      world.split(place.dp_group_id, place.grad_dp_rank(layout), log::cat("dp", place.dp_group_id));
  auto pp = world.split(place.pp_group_id, place.pp_rank, log::cat("pp", place.pp_group_id));
  // Tied embeddings over several stages: the first and last stage sum their gradient. Every
  // rank takes part in the split; the others get a group of their own, never used.
  std::unique_ptr<Communicator> embedding;
  const ModelShape& shape = run.workload.shape;
  if (shape.vocab > 0 && shape.tie_embeddings && layout.pp > 1) {
    const int colour = place.in_embedding_group() ? place.pp_group_id : layout.world() + ctx.rank();
    embedding = world.split(colour, place.pp_rank, log::cat("embedding", place.pp_group_id));
  }
  // Context and expert groups, only where the layout has them (each split is collective: every
  // rank makes the same ones, in this order).
  std::unique_ptr<Communicator> cp, ep, etp, edp, tp_ep;
  if (layout.cp > 1) {
    cp = world.split(place.cp_group_id, place.cp_rank, log::cat("cp", place.cp_group_id));
  }
  if (layout.ep > 1 || layout.etp > 0 || shape.moe()) {
    ep = world.split(place.ep_group_id, place.ep_rank, log::cat("ep", place.ep_group_id));
    etp = world.split(place.etp_group_id, place.etp_rank, log::cat("etp", place.etp_group_id));
    edp = world.split(place.edp_group_id, place.edp_rank, log::cat("edp", place.edp_group_id));
    tp_ep = world.split(place.tp_ep_group_id, place.tp_ep_rank(layout),
                        log::cat("tp_ep", place.tp_ep_group_id));
  }
  MockRunResult out;
  out.plan = build_plan(run.workload, place);
  out.timing = resolve_op_timing(run.settings.timing, backend, ctx);
  RunSettings settings = run.settings;
  settings.timing = out.timing;
  if (run.link_probe) {
    // On a communicator of the run's that spans the world, its connections are the ones the
    // steps use: the probe sets up only what the run does not (2.1 s of a 4 s run on 2 H200 when
    // it swept the world's communicator). Every rank picks the same one: the groups' sizes
    // and orders are the layout's.
    Communicator* over = &world;
    for (Communicator* c : {dp.get(), tp.get(), pp.get(), cp.get(), ep.get()}) {
      if (c != nullptr && c->size() == world.size() && c->rank() == world.rank()) {
        over = c;
        break;
      }
    }
    if (std::optional<LinkProbe> probe = probe_links(ctx, backend, *over)) {
      if (run.on_probe) run.on_probe(*probe);
      settings.link_probe = std::move(probe->model);
    }
  }
  GroupComms comms{tp.get(), dp.get(), pp.get(), embedding.get()};
  comms.cp = cp.get();
  comms.ep = ep.get();
  comms.etp = etp.get();
  comms.edp = edp.get();
  comms.tp_ep = tp_ep.get();
  // MoE layers route each step anew: each step its own plan (out.plan stays step 0's).
  std::optional<PlanExecutor> executor;
  if (plan_moves_between_steps(run.workload)) {
    executor.emplace(
        backend, ctx, out.plan,
        [&run, place](int step) {
          return build_plan(run.workload, place, static_cast<std::uint64_t>(step));
        },
        comms, out.timing, settings.sample_every);
  } else {
    executor.emplace(backend, ctx, out.plan, comms, out.timing, settings.sample_every);
  }
  RankTimeline& timeline = out.timeline;
  timeline.rank = ctx.rank();
  timeline.world_size = ctx.size();
  timeline.local_rank = ctx.local_rank();
  timeline.host = ctx.host();
  timeline.device = backend.device_description();
  timeline.backend = backend.name();
  timeline.config = JsonObject(run_config_json(run.workload, settings));
  // Collective, before the first step: how far this rank's clock is from rank 0's (exactly 0
  // on rank 0's host, whose CLOCK_MONOTONIC all its processes share), so the reducer can
  // line up ranks of different hosts.
  timeline.clock_offset_ns = estimate_clock_offset_ns(ctx.comm(), ctx.host());
  executor->set_test_hang_rank(run.test_hang_rank);
  // Each step is appended to the rank file as it completes (the first creates it): whatever
  // ends the job later (a dead peer, a timeout, SIGKILL), the steps measured so far remain.
  std::optional<RankFileAppender> file;
  if (!run.out_dir.empty()) file.emplace(run.out_dir, timeline, run.rank_file_format);
  executor->set_test_fault(run.test_fault);
  executor->set_step_timeout(run.step_timeout_s);
  try {
    timeline.steps = executor->run(settings.steps, settings.warmup_steps,
                                   [&](const std::vector<StepRecord>& so_far) {
                                     if (file) file->append(so_far.back());
                                   });
  } catch (const Error& e) {
    // A failed step (a timeout) leaves what it submitted and never saw finish in the file.
    if (file && !executor->unfinished().empty()) {
      record_unfinished(run.out_dir, file->path(), timeline, executor->failed_step(),
                        executor->unfinished(), e.what(), run.rank_file_format);
    }
    // The ranks waiting in the same collective time out within moments of one another, and the
    // first to end the job (MPI_Abort) kills the others: give them a moment to record what they
    // waited on too, or `diagnose` finds no record of them (8 ranks on 2 cores once lost two).
    if (dynamic_cast<const TimeoutError*>(&e) != nullptr) pause_unless_stopped(kRecordGraceS);
    throw;
  }
  if (file) file->close();
  out.stopped_by = executor->stopped_by();
  if (run.estimate_collectives && out.stopped_by == 0) {
    if (CostModel* model = backend.cost_model()) {
      out.estimate_model = model->model_name();
      out.estimates = executor->estimate_collectives(*model);
    } else {
      out.no_estimate_why = backend.unavailable_reason(Capability::kCostModel);
    }
  }
  return out;
}

}  // namespace commprof
