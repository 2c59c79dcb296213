// SPDX-License-Identifier: MIT
// The fields of each report struct that crosses processes in a shared reduction
// (distributed_reduction.hpp), each named once: wire::Writer and wire::Reader run the same
// transfer() (wire_codec.hpp). A field added to one of these structs belongs here too; the
// round-trip tests (tests/analysis/reduction_wire_test.cpp) fill every field and fail on one
// left out. The reduction's own messages keep their transfer() beside their struct.
#pragma once

#include "analysis/collective_matching.hpp"
#include "analysis/group_time.hpp"
#include "analysis/report.hpp"
#include "analysis/step_metrics.hpp"
#include "analysis/wire_codec.hpp"

namespace commprof {

template <class IO>
void transfer(IO& io, FileProblem& p) {
  io(p.file, p.message);
}

template <class IO>
void transfer(IO& io, GroupTime& g) {
  io(g.group, g.comm_ns, g.exposed_ns, g.alltoalls, g.recv_bytes, g.recv_calls);
}

template <class IO>
void transfer(IO& io, StepPoint& p) {
  io(p.index, p.warmup, p.ops, p.start_ns, p.wall_ns, p.overlap);
}

// A Stat as its bits, running sums included: process 0 goes on with the same doubles.
template <class IO>
void transfer(IO& io, HtaFigures& h) {
  io(h.steps, h.steps_of, h.comm_ns, h.comp_ns, h.comm_comp_ns, h.busy_ns, h.span_ns);
}

template <class IO>
void transfer(IO& io, BackToBackSums& b) {
  io(b.collective, b.comm_size, b.bytes, b.pairs, b.calls, b.span_ns, b.in_place);
}

template <class IO>
void transfer(IO& io, RankSummary& r) {
  io(r.rank, r.world_size, r.host, r.device, r.backend, r.source, r.steps_from, r.plugin_calls,
     r.plugin_timed, r.plugin_dropped, r.back_to_back, r.clock_offset_ns, r.pp_stage, r.steps,
     r.timed_steps, r.warmup_steps, r.ops);
  io(wire::raw(r.wall_ns), wire::raw(r.comp_ns), wire::raw(r.comm_ns), wire::raw(r.mem_ns),
     wire::raw(r.busy_ns), wire::raw(r.comm_comp_ns), wire::raw(r.exposed_comm_ns),
     wire::raw(r.idle_ns), wire::raw(r.timed_wall_ns), wire::raw(r.plain_wall_ns),
     wire::raw(r.overlap), wire::raw(r.hidden_fraction));
  io(r.hta);
  io(r.step_points, r.group_times);
}

template <class IO>
void transfer(IO& io, CollectiveInstance& c) {
  io(c.comm, c.seq, c.collective, c.comm_size, c.bytes, c.offrank_bytes, c.offrank_ranks, c.algo,
     c.phase, c.in_place, c.ranks_seen, c.consistent, c.first_start_ns, c.last_start_ns,
     c.first_rank, c.last_rank, c.min_end_ns, c.max_end_ns, c.min_duration_ns, c.max_duration_ns,
     c.mean_duration_ns, c.wait_caused_ns, c.order, c.sum_duration_ns_);
}

template <class IO>
void transfer(IO& io, RankWait& w) {
  io(w.rank, w.host, w.collectives, w.wait_ns, w.wait_caused_ns, w.times_last, w.times_first);
}

template <class IO>
void transfer(IO& io, WaitCell& c) {
  io(c.rank, c.column, c.wait_caused_ns);
}

template <class IO>
void transfer(IO& io, CriticalStepRow& r) {
  io(r.step, r.step_ns, r.path_ns, r.comp_ns, r.comm_ns, r.mem_ns, r.gap_ns, r.ops, r.ranks,
     r.exposed_comm_ns, r.straggler_rank, r.straggler_at, r.straggler_late_ns, r.straggler_cause,
     r.straggler_excess_ns);
}

template <class IO>
void transfer(IO& io, CriticalSegment& s) {
  io(s.rank, s.op, s.gap, s.category, s.name, s.start_ns, s.end_ns);
}

template <class IO>
void transfer(IO& io, CriticalPathOfStep& p) {
  io(p.step, p.segments);
}

}  // namespace commprof
