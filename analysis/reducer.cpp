// SPDX-License-Identifier: MIT
#include "analysis/reducer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <variant>

#include "analysis/instance_tables.hpp"
#include "analysis/reduction_shard.hpp"
#include "analysis/reduction_wire.hpp"
#include "analysis/report_fields.hpp"
#include "analysis/saturating_sum.hpp"
#include "analysis/wire_codec.hpp"
#include "src/core/errors.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {

// Everything one rank file contributes, kept aside until the file has been read completely and
// found valid: a file that fails half-way contributes nothing, as when it was read whole first.
class Reducer::Staging final : public RankStepSink {
 public:
  explicit Staging(Reducer& reducer) : r_(reducer) {}

  void begin(const std::string& source) {
    source_ = source;
    restart();
  }

  void restart() override {
    summary_ = RankSummary{};
    duplicate_of_.reset();
    offset_ = 0;
    rank_ = 0;
    pending_.clear();
    hta_ = HtaScope{};
    r_.unfinished_.discard();
    for (const std::uint32_t slot : touched_) staged_[slot] = Timing{};
    touched_.clear();
  }

  void header(const RankTimeline& t) override {
    summary_.rank = rank_ = t.rank;
    summary_.world_size = t.world_size;
    summary_.host = t.host;
    summary_.device = t.device;
    summary_.backend = t.backend;
    summary_.source = source_;
    summary_.steps_from = steps_from(t.config);
    plugin_counts(t.config, summary_);
    summary_.clock_offset_ns = offset_ = t.clock_offset_ns;
    summary_.pp_stage = pipeline_stage(t.rank, t.config);
    if (const auto forced = r_.forced_duplicates_.find(r_.file_index_);
        forced != r_.forced_duplicates_.end()) {
      duplicate_of_ = forced->second;
    } else if (const auto kept = kept_.find(t.rank); kept != kept_.end()) {
      duplicate_of_ = kept->second;
    }
    r_.unfinished_.stage_header(t.rank, t.config);
  }

  void step(const StepView& step) override {
    if (duplicate_of_) return;  // read to the end only to check it
    // Warm-up steps too: the per-step trend shows them.
    const StepMetrics m = compute_step_metrics(step, scratch_);
    if (r_.options_.step_points) {
      summary_.step_points.push_back(
          step_point(step.index, step.warmup, step.ops->size(), step.start_ns, offset_, m));
      if (!compute_known(summary_.backend)) summary_.step_points.back().overlap = -1.0f;
    }
    if (step.warmup) {
      ++summary_.warmup_steps;
      return;
    }
    if (!step.ops->empty()) {
      add_group_times(step, scratch_.comp, summary_.group_times, group_scratch_);
    }
    for (const OpView& op : *step.ops) {
      if (op.category == Category::kComm) {
        // Its lists live as long as the step: what the matcher needs of them, now.
        pending_.push_back({op, CollectiveMatcher::offrank_bytes_of(op)});
        pending_.back().op.peer_send_bytes = pending_.back().op.peer_recv_bytes = {};
        r_.unfinished_.stage_finished(op.comm, op.seq);
      }
      const std::uint32_t slot = slot_of(op.name, op.category);
      Timing& timing = staged_[slot];
      if (timing.count == 0) touched_.push_back(slot);
      const std::int64_t duration = op.duration_ns();
      ++timing.count;
      add_saturating(timing.total_ns, duration);
      // Interference is about COMP and COMM competing for SMs and memory bandwidth.
      bool overlapped = false;
      if (op.category == Category::kComp) {
        overlapped = covered_length(scratch_.comm, op.start_ns, op.end_ns) > 0;
      } else if (op.category == Category::kComm) {
        overlapped = covered_length(scratch_.comp, op.start_ns, op.end_ns) > 0;
      }
      if (overlapped) {
        ++timing.overlapped_count;
        add_saturating(timing.overlapped_total_ns, duration);
      }
    }
    add_step(summary_, m, static_cast<std::int64_t>(step.ops->size()));
    hta_.add_step(*step.ops);
  }

  void end() override {
    if (duplicate_of_) {
      r_.outcomes_.push_back({r_.file_index_, rank_, duplicate_of_->first});
      r_.add_problem(source_, "rank " + std::to_string(rank_) + " was already read from '" +
                                  duplicate_of_->second + "'; this file is ignored");
      restart();
      return;
    }
    r_.outcomes_.push_back({r_.file_index_, rank_, r_.file_index_});
    kept_.emplace(rank_, std::make_pair(r_.file_index_, source_));
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      r_.matcher_.add(rank_, pending_[i].op, offset_,
                      CollectiveMatcher::order_of(r_.file_index_, i), pending_[i].offrank);
    }
    r_.unfinished_.commit();
    for (const std::uint32_t slot : touched_) {
      Timing& total = totals_[slot];
      const Timing& add = staged_[slot];
      total.count += add.count;
      add_saturating(total.total_ns, add.total_ns);
      total.overlapped_count += add.overlapped_count;
      add_saturating(total.overlapped_total_ns, add.overlapped_total_ns);
    }
    summary_.hta = hta_.figures();
    finish_summary(summary_);
    r_.report_.ranks.push_back(std::move(summary_));
    restart();
  }

  /// The per-name timings, for merge_shards.
  void add_timings(std::vector<ReductionShard::Timing>& out) const {
    for (std::size_t slot = 0; slot < totals_.size(); ++slot) {
      const Timing& t = totals_[slot];
      if (t.count == 0) continue;
      out.push_back({static_cast<int>(slot % 3), names_[slot / 3], t.count, t.total_ns,
                     t.overlapped_count, t.overlapped_total_ns});
    }
  }

  /// Moves the per-name timings into the report.
  void publish(std::map<std::pair<int, std::string>, OpTiming>& out) const {
    for (std::size_t slot = 0; slot < totals_.size(); ++slot) {
      const Timing& t = totals_[slot];
      if (t.count == 0) continue;
      OpTiming& o = out[{static_cast<int>(slot % 3), names_[slot / 3]}];
      // Integer ns summed exactly (up to 2^63 ns), then converted: the same doubles as adding
      // each op's duration as a double, as long as totals stay below 2^53 ns (104 days).
      o.count += t.count;
      o.total_ns += static_cast<double>(t.total_ns);
      o.overlapped_count += t.overlapped_count;
      o.overlapped_total_ns += static_cast<double>(t.overlapped_total_ns);
    }
  }

 private:
  struct Timing {
    std::int64_t count = 0;
    std::int64_t total_ns = 0;
    std::int64_t overlapped_count = 0;
    std::int64_t overlapped_total_ns = 0;
  };

  // Op names interned once for the whole reduction: one hash per op, no string copies.
  std::uint32_t slot_of(std::string_view name, Category category) {
    auto it = ids_.find(name);
    if (it == ids_.end()) {
      names_.emplace_back(name);
      it = ids_.emplace(names_.back(), static_cast<std::uint32_t>(names_.size() - 1)).first;
      staged_.resize(names_.size() * 3);
      totals_.resize(names_.size() * 3);
    }
    return it->second * 3 + static_cast<std::uint32_t>(index_of(category));
  }

  Reducer& r_;
  std::string source_;
  RankSummary summary_;
  std::optional<std::pair<std::uint32_t, std::string>> duplicate_of_;  // the kept file
  std::map<int, std::pair<std::uint32_t, std::string>> kept_;          // by rank: index and source
  std::int64_t offset_ = 0;
  int rank_ = 0;
  struct Pending {
    OpView op;
    std::optional<std::uint64_t> offrank;  // CollectiveMatcher::offrank_bytes_of(op)
  };
  std::vector<Pending> pending_;  // COMM ops, for the matcher once the file is known good
  HtaScope hta_;
  StepScratch scratch_;
  GroupScratch group_scratch_;
  std::deque<std::string> names_;  // stable addresses: ids_ keys point into them
  std::unordered_map<std::string_view, std::uint32_t> ids_;
  std::vector<Timing> staged_;  // by slot (name id × 3 + category): this file
  std::vector<std::uint32_t> touched_;
  std::vector<Timing> totals_;  // by slot: files committed
};

Reducer::Reducer(ReduceOptions options)
    : options_(options), staging_(std::make_unique<Staging>(*this)) {
  report_.peak_busbw_gbps = options.peak_busbw_gbps;
}

Reducer::~Reducer() = default;

void Reducer::add_problem(const std::string& file, const std::string& message) {
  report_.problems.push_back({file, message});
  problem_index_.push_back(file_index_);
}

void Reducer::treat_as_duplicate(std::uint32_t index, std::uint32_t kept_index,
                                 std::string kept_source) {
  forced_duplicates_[index] = {kept_index, std::move(kept_source)};
}

void Reducer::add(RankTimeline t, const std::string& source) {
  if (!index_given_) file_index_ = next_index_++;
  staging_->begin(source);
  send_timeline(std::move(t), *staging_);
}

namespace {

// One read of a file, two readers: the reducer's staging, then the second reader.
class TeeSink final : public RankStepSink {
 public:
  TeeSink(RankStepSink& first, RankStepSink& second) : first_(first), second_(second) {}
  void header(const RankTimeline& h) override {
    first_.header(h);
    second_.header(h);
  }
  void step(const StepView& s) override {
    first_.step(s);
    second_.step(s);
  }
  void end() override {
    first_.end();
    second_.end();
  }
  void restart() override {
    first_.restart();
    second_.restart();
  }

 private:
  RankStepSink& first_;
  RankStepSink& second_;
};

}  // namespace

void Reducer::add_file(const std::string& path) {
  if (!index_given_) file_index_ = next_index_++;
  staging_->begin(path);
  try {
    if (also_ == nullptr) {
      stream_rank_file(path, *staging_);
    } else {
      also_->begin_file(file_index_);
      TeeSink both(*staging_, *also_);
      stream_rank_file(path, both);
    }
  } catch (...) {
    staging_->restart();
    if (also_ != nullptr) also_->restart();
    throw;
  }
}

namespace {

// The job's size (the largest any rank file names; a warning where they differ) and the ranks
// of 0..world_size-1 that no file was read for.
void check_world(Report& rep) {
  std::set<int> sizes;
  for (const RankSummary& r : rep.ranks) {
    rep.world_size = std::max(rep.world_size, r.world_size);
    sizes.insert(r.world_size);
  }
  if (sizes.size() > 1) {
    rep.warnings.push_back("rank files disagree on world_size (" + std::to_string(*sizes.begin()) +
                           " to " + std::to_string(*sizes.rbegin()) +
                           "): they may come from different runs");
  }
  {
    std::vector<bool> seen(static_cast<std::size_t>(rep.world_size), false);
    for (const RankSummary& r : rep.ranks) seen[static_cast<std::size_t>(r.rank)] = true;
    for (int r = 0; r < rep.world_size; ++r) {
      if (!seen[static_cast<std::size_t>(r)]) rep.missing_ranks.push_back(r);
    }
  }
}

// Per compared per-rank field (report_fields.hpp), each rank's mean over its measured steps,
// summarised across ranks with the worst rank named.
void add_across_ranks(Report& rep) {
  for (const report_fields::Field<RankSummary>& f : report_fields::kRankFields) {
    if (f.family.empty()) continue;
    AcrossRanks row;
    row.metric = report_fields::metric_of_key(f.key);
    row.unit = f.unit;
    std::vector<const RankSummary*> contributors;
    for (const RankSummary& r : rep.ranks) {
      const Stat& s = *std::get<const Stat*>(f.get(r));
      if (s.count == 0) continue;
      row.stat.add(s.mean);
      contributors.push_back(&r);
    }
    if (row.stat.count > 0) {
      // Worst is the largest, or the smallest where more is better (overlap).
      const RankSummary* worst = contributors[static_cast<std::size_t>(
          f.higher_is_better ? row.stat.argmin : row.stat.argmax)];
      row.worst_rank = worst->rank;
      row.worst_host = worst->host;
    }
    rep.across.push_back(std::move(row));
  }
}

// Per pipeline stage, over the ranks whose files place them there: what the stage computes and how
// long it waits. The bubble of a rank is the part of its step with no compute, 1 − |∪COMP| / step
// time of the steps that carried per-op timing (the pipeline's fill and drain, and the waits for
// the neighbouring stages), so a stage with more work (the last one's LM head and loss) shows its
// longer busy time and the others their longer bubble.
void add_stage_rows(Report& rep) {
  std::map<int, StageRow> stages;
  for (const RankSummary& r : rep.ranks) {
    if (r.pp_stage < 0 || r.comp_ns.count == 0 || r.timed_wall_ns.count == 0) continue;
    StageRow& row = stages[r.pp_stage];
    row.stage = r.pp_stage;
    ++row.ranks;
    row.step_ns += r.timed_wall_ns.mean;
    row.comp_ns += r.comp_ns.mean;
    row.busy_ns += r.busy_ns.mean;
    row.bubble += r.timed_wall_ns.mean > 0 ? 1.0 - r.comp_ns.mean / r.timed_wall_ns.mean : 0.0;
  }
  for (auto& [stage, row] : stages) {
    row.step_ns /= row.ranks;
    row.comp_ns /= row.ranks;
    row.busy_ns /= row.ranks;
    row.bubble /= row.ranks;
    rep.stages.push_back(row);
  }
}

// Per kind of communicator, what its ops cost the ranks that use it (means over those ranks of
// each rank's per-step means), with the all-to-all balance: the bytes each rank received (an MoE
// dispatch's expert load), the busiest rank against the mean, and the waiting at those calls.
void add_group_time_rows(Report& rep, const std::map<std::string, std::int64_t>& waits) {
  std::map<std::string, GroupTimeRow> rows;
  std::map<std::string, std::int64_t> rank_steps;  // Σ timed steps of the group's ranks
  std::map<std::string, Stat> recv;                // per rank: bytes received per step
  for (const RankSummary& r : rep.ranks) {
    if (r.timed_steps == 0) continue;
    const double steps = r.timed_steps;
    for (const GroupTime& t : r.group_times) {
      GroupTimeRow& row = rows[t.group];
      row.group = t.group;
      ++row.ranks;
      rank_steps[t.group] += r.timed_steps;
      row.comm_ns += static_cast<double>(t.comm_ns) / steps;
      if (!compute_known(r.backend)) row.exposed_unknown = true;
      const double exposed = static_cast<double>(t.exposed_ns) / steps;
      row.exposed_ns += exposed;
      if (row.exposed_worst_rank < 0 || exposed > row.exposed_max_ns) {
        row.exposed_max_ns = exposed;
        row.exposed_worst_rank = r.rank;
      }
      row.alltoalls += static_cast<double>(t.alltoalls) / steps;
      if (t.recv_calls == 0) continue;
      Stat& s = recv[t.group];
      s.add(static_cast<double>(t.recv_bytes) / steps);
      if (s.argmax == s.count - 1) row.recv_busiest_rank = r.rank;
    }
  }
  for (auto& [group, row] : rows) {
    row.comm_ns /= row.ranks;
    row.exposed_ns /= row.ranks;
    row.alltoalls /= row.ranks;
    if (const auto s = recv.find(group); s != recv.end()) {
      row.recv_mean_bytes = s->second.mean;
      row.recv_max_bytes = s->second.max;
      if (s->second.mean > 0) row.recv_imbalance = s->second.max / s->second.mean;
    }
    if (const auto w = waits.find(group); w != waits.end()) {
      row.alltoall_wait_ns =
          static_cast<double>(w->second) / static_cast<double>(rank_steps[group]);
    }
    rep.group_times.push_back(row);
  }
}

}  // namespace

namespace {

// Where a rank's per-step overlap and HTA's differ by 0.01 percentage points or more, why: the
// same formula aggregated otherwise (analysis/hta_scope.hpp).
void explain_hta_differences(Report& rep) {
  for (RankSummary& r : rep.ranks) {
    const std::optional<double> hta = r.hta.overlap();
    if (r.overlap.count == 0 || !hta || std::fabs(r.overlap.mean - *hta) < 1e-4) continue;
    char ours[32];
    std::snprintf(ours, sizeof ours, "%.2f", 100.0 * r.overlap.mean);
    r.hta_differs = "per step: mean of " + std::to_string(r.overlap.count) + " step ratio(s), " +
                    ours + " %; HTA: one ratio over " + std::to_string(r.hta.steps) +
                    (r.hta.steps < r.hta.steps_of
                         ? " of " + std::to_string(r.hta.steps_of) + " steps (the last left out)"
                         : std::string(" step(s)")) +
                    ", ops rounded inward to whole us";
  }
}

// Captures cut into steps rank by rank (NCCL's plugin) agree where their communicators' calls
// do; where they do not, the steps of one index are not the same step on every rank: said.
void check_cut_steps(Report& rep) {
  std::map<int, std::vector<int>> ranks_of;  // measured steps -> ranks
  for (const RankSummary& s : rep.ranks) {
    if (!s.steps_from.empty()) ranks_of[s.steps].push_back(s.rank);
  }
  if (ranks_of.size() < 2) return;
  std::string counts;
  for (const auto& [steps, ranks] : ranks_of) {
    counts += (counts.empty() ? "" : ", ") + std::to_string(steps) + " on rank " +
              std::to_string(ranks.front()) +
              (ranks.size() > 1 ? " and " + std::to_string(ranks.size() - 1) + " more" : "");
  }
  rep.warnings.push_back("the plugin captures were cut into different numbers of steps (" + counts +
                         "): a step's index may not name the same step on every rank (see "
                         "steps_from; COMMPROF_PLUGIN_STEP_MARKER sets the steps)");
}

// Each collective row's back-to-back busbw from the plugin captures' runs of its calls, summed
// over the ranks (src/timeline/back_to_back.hpp): bytes x factor over the mean period.
void add_back_to_back(Report& rep) {
  std::map<std::tuple<std::string, int, std::uint64_t, std::string>,
           std::pair<std::int64_t, std::int64_t>>
      sums;  // calls, span
  for (const RankSummary& r : rep.ranks) {
    for (const BackToBackSums& b : r.back_to_back) {
      auto& [calls, span] = sums[{b.collective, b.comm_size, b.bytes, placement_name(b.in_place)}];
      calls += b.calls;
      span += b.span_ns;
    }
  }
  for (CollectiveRow& row : rep.collectives) {
    const auto it = sums.find({row.collective, row.comm_size, row.bytes, row.placement});
    const double factor = busbw_factor_for(row.collective, row.comm_size);
    if (it == sums.end() || factor < 0 || it->second.second <= 0) continue;
    row.back_to_back_busbw_gbps = static_cast<double>(row.bytes) * factor *
                                  static_cast<double>(it->second.first) /
                                  static_cast<double>(it->second.second);
  }
}

// What finishing a report takes once the ranks, op timings and the tables of matched collectives
// (tabulate_instances) are in `rep`: the same steps whether one process read every file or
// several shared them.
void complete_report(Report& rep, const std::vector<RankWait>& waits,
                     std::vector<std::string> hang_findings, const InstanceFindings& found) {
  std::sort(rep.ranks.begin(), rep.ranks.end(),
            [](const RankSummary& a, const RankSummary& b) { return a.rank < b.rank; });
  check_world(rep);
  check_cut_steps(rep);
  add_back_to_back(rep);
  add_across_ranks(rep);
  explain_hta_differences(rep);
  std::map<int, const std::string*> host_of;
  for (const RankSummary& s : rep.ranks) host_of[s.rank] = &s.host;
  for (const RankWait& w : waits) {
    if (w.collectives == 0) continue;
    rep.waits.push_back(w);
    const auto host = host_of.find(w.rank);
    if (host != host_of.end()) rep.waits.back().host = *host->second;
  }
  for (const std::string& line : found.warnings) rep.warnings.push_back(line);
  for (std::string& line : hang_findings) rep.warnings.push_back(std::move(line));
  add_group_time_rows(rep, found.alltoall_waits);
  add_stage_rows(rep);
}

}  // namespace

Report Reducer::finish() {
  staging_->publish(report_.op_timings);
  matcher_.finish(0);
  SoloExchange alone;
  const InstanceFindings found = tabulate_instances(matcher_.instances(), report_, alone);
  report_.instances = matcher_.instances();
  complete_report(report_, matcher_.rank_waits(), unfinished_.findings(), found);
  return std::move(report_);
}

std::vector<std::string> Reducer::collective_partials(int owners) const {
  return matcher_.partials(owners);
}

std::string Reducer::summaries(std::size_t begin, std::size_t end) const {
  end = std::min(end, report_.ranks.size());
  begin = std::min(begin, end);
  wire::Writer out;
  out.list(end - begin);
  for (std::size_t i = begin; i < end; ++i) out(report_.ranks[i]);
  return out.take();
}

void Reducer::read_summaries(std::string_view bytes, std::vector<RankSummary>& out) {
  wire::Reader in(bytes);
  in.each<RankSummary>([&](RankSummary r) { out.push_back(std::move(r)); });
  in.expect_end();
}

void Reducer::drop_collectives() { matcher_ = CollectiveMatcher{}; }

ReductionShard Reducer::shard() const {
  ReductionShard shard;
  for (std::size_t i = 0; i < report_.problems.size(); ++i) {
    shard.problems.push_back({problem_index_[i], report_.problems[i]});
  }
  staging_->add_timings(shard.timings);
  shard.unfinished = unfinished_.committed();
  return shard;
}

void Reducer::merge_shards(Report& rep, const std::vector<std::string>& shards,
                           const InstanceFindings& found) {
  UnfinishedCollectives unfinished;
  std::vector<RankWait> waits;
  commprof::merge_shards(shards, rep, waits, unfinished);
  complete_report(rep, waits, unfinished.findings(), found);
}

Report reduce_rank_files(const std::vector<std::string>& files, const ReduceOptions& options,
                         const std::function<void(const RankTimeline&)>& observer,
                         FileStepSink* also) {
  Reducer reducer(options);
  if (!observer) reducer.also_stream_to(also);
  for (const std::string& file : files) {
    if (!observer) {
      try {
        reducer.add_file(file);
      } catch (const std::exception& e) {
        reducer.add_problem(file, e.what());
      }
      continue;
    }
    RankTimeline t;
    try {
      t = read_rank_file(file);
    } catch (const std::exception& e) {
      reducer.add_problem(file, e.what());
      continue;
    }
    observer(t);
    reducer.add(t, file);
  }
  Report report = reducer.finish();
  report.inputs = files;
  return report;
}

void compare_with_baseline(Report& run, const Report& base, const std::string& source) {
  BaselineComparison cmp;
  cmp.source = source;
  auto mean_of = [](const Report& r, const char* metric) {
    for (const AcrossRanks& a : r.across) {
      if (a.metric == metric) return a.stat.mean;
    }
    return 0.0;
  };
  cmp.run_step_ns = mean_of(run, "step_time");
  cmp.baseline_step_ns = mean_of(base, "step_time");
  if (cmp.run_step_ns > 0) cmp.speedup = cmp.baseline_step_ns / cmp.run_step_ns;
  cmp.run_comm_ns = mean_of(run, "comm_busy");
  cmp.baseline_comm_ns = mean_of(base, "comm_busy");
  Stat hidden;
  for (const RankSummary& r : run.ranks) {
    if (r.comm_comp_ns.count > 0) hidden.add(r.comm_comp_ns.mean);
  }
  cmp.comm_hidden_ns = hidden.mean;
  for (Category category : {Category::kComp, Category::kComm}) {
    Interference in;
    in.category = category_name(category);
    double run_total = 0.0;
    double base_total = 0.0;
    for (const auto& [key, timing] : run.op_timings) {
      if (key.first != static_cast<int>(index_of(category)) || timing.overlapped_count == 0) {
        continue;
      }
      const auto it = base.op_timings.find(key);
      if (it == base.op_timings.end() || it->second.count == 0) continue;
      ++in.names;
      in.ops += timing.overlapped_count;
      run_total += timing.overlapped_total_ns;
      // The baseline's mean for this name, once per overlapped op: a like-for-like weighting.
      base_total += it->second.total_ns / static_cast<double>(it->second.count) *
                    static_cast<double>(timing.overlapped_count);
    }
    if (in.ops > 0) {
      in.run_mean_ns = run_total / static_cast<double>(in.ops);
      in.baseline_mean_ns = base_total / static_cast<double>(in.ops);
      if (base_total > 0) in.slowdown = run_total / base_total - 1.0;
    }
    cmp.interference.push_back(in);
  }
  run.baseline = cmp;
}

}  // namespace commprof
