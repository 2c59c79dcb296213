// SPDX-License-Identifier: MIT
#include "analysis/nsys/nsys_activities.hpp"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "analysis/nsys/nsys_import.hpp"
#include "src/timeline/op_range_text.hpp"

namespace commprof::nsys {
namespace {

std::string memcpy_name(std::int64_t copy_kind) {
  // ENUM_CUDA_MEMCPY_OPER
  switch (copy_kind) {
    case 1:
      return "Memcpy HtoD";
    case 2:
      return "Memcpy DtoH";
    case 3:
      return "Memcpy HtoA";
    case 4:
      return "Memcpy AtoH";
    case 5:
      return "Memcpy AtoA";
    case 6:
      return "Memcpy AtoD";
    case 7:
      return "Memcpy DtoA";
    case 8:
      return "Memcpy DtoD";
    case 9:
      return "Memcpy HtoH";
    case 10:
      return "Memcpy PtoP";
    default:
      return "Memcpy";
  }
}

const std::vector<std::string>& known_collectives() {
  static const std::vector<std::string> names = {"allreduce", "allgather", "reducescatter",
                                                 "broadcast", "reduce",    "alltoall",
                                                 "sendrecv",  "send",      "recv"};
  return names;
}

/// The first of COMM, MEM, COMP wins when an op's activities are classed differently.
int class_rank(RuleClass c) {
  return c == RuleClass::kComm ? 0 : c == RuleClass::kMem ? 1 : c == RuleClass::kComp ? 2 : 3;
}

}  // namespace

std::pair<std::string, std::string> collective_of_op_name(const std::string& name) {
  std::vector<std::string> parts;
  std::stringstream ss(name);
  std::string p;
  while (std::getline(ss, p, '.')) parts.push_back(p);
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    for (const std::string& c : known_collectives()) {
      if (*it == c) return {c, parts.front()};
    }
  }
  return {"", ""};
}

struct ActivityCorrelator::OpenRange {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::uint64_t id = 0;
  Category category = Category::kComp;
  std::string name;
  std::uint64_t bytes = 0;
  std::string collective;  ///< COMM ranges: from the range's tag, else from the op name
  std::string comm;
  int comm_size = 0;  ///< from the tag; 0: unknown (the world size is used)
  std::int64_t seq = -1;
};

struct ActivityCorrelator::PendingOp {
  OpRecord rec;
  std::optional<Category> range;    ///< commprof op range around the launch
  std::int64_t stream = 0;          ///< stream of the first activity
  std::vector<std::uint32_t> acts;  ///< distinct ActKeys of its activities
};

ActivityCorrelator::ActivityCorrelator(Db& db, const RuleSet& rules, const NsysSchema& schema,
                                       const CommprofDomain& domain,
                                       const std::vector<StepRange>& steps, std::int64_t shift,
                                       int world_size, const RankTimeline& header,
                                       NsysFileSummary& summary, const NsysStepSink& on_step)
    : db_(db),
      rules_(rules),
      schema_(schema),
      domain_(domain),
      steps_(steps),
      shift_(shift),
      world_size_(world_size),
      header_(header),
      sum_(summary),
      on_step_(on_step) {}

std::uint32_t ActivityCorrelator::intern(const std::string& name) {
  auto [it, added] = name_index_.try_emplace(name, static_cast<std::uint32_t>(names_.size()));
  if (added) names_.push_back(name);
  return it->second;
}

std::uint32_t ActivityCorrelator::key_of(ActivityKind kind, const std::string& name,
                                         std::int64_t stream) {
  const ActKey key{kind, intern(name), stream};
  auto [it, added] = key_index_.try_emplace(key, static_cast<std::uint32_t>(keys_.size()));
  if (added) {
    keys_.push_back(key);
    key_class_.push_back({-1, -1, -1, -1});
  }
  return it->second;
}

RuleClass ActivityCorrelator::classify_key(std::uint32_t k, std::optional<Category> range) {
  const std::size_t slot = range ? 1 + index_of(*range) : 0;
  std::int8_t& c = key_class_[k][slot];
  if (c < 0) {
    ActivityFacts f;
    f.kind = keys_[k].kind;
    f.name = names_[keys_[k].name];
    const auto m = stream_marks_.find(keys_[k].stream);
    f.stream_marks = m == stream_marks_.end() ? 0 : m->second;
    f.range = range;
    c = static_cast<std::int8_t>(rules_.classify(f));
  }
  return static_cast<RuleClass>(c);
}

// Turns the pending ops of one step into its StepRecord and hands it on.
void ActivityCorrelator::finish_step(const StepRange& range, std::vector<PendingOp>& ops,
                                     std::int64_t last_end) {
  StepRecord st;
  st.index = range.index;
  st.warmup = range.warmup;
  st.start_ns = range.start + shift_;
  st.end_ns = ops.empty() ? range.end + shift_ : std::max(last_end, st.start_ns);
  st.ops.reserve(ops.size());
  for (PendingOp& op : ops) {
    // The op's class is the first of COMM, MEM, COMP among its activities' classes.
    RuleClass cls = RuleClass::kIgnore;
    for (std::uint32_t k : op.acts) {
      const RuleClass c = classify_key(k, op.range);
      if (class_rank(c) < class_rank(cls)) cls = c;
    }
    if (cls == RuleClass::kIgnore) {
      ++sum_.ignored;
      continue;
    }
    OpRecord& r = op.rec;
    r.category = cls == RuleClass::kComm  ? Category::kComm
                 : cls == RuleClass::kMem ? Category::kMem
                                          : Category::kComp;
    const auto m = stream_marks_.find(op.stream);
    const std::uint8_t marks = m == stream_marks_.end() ? 0 : m->second;
    r.stream = "stream" + std::to_string(op.stream);
    for (Category c : kAllCategories) {
      if (marks == (1u << index_of(c))) r.stream = category_name(c);
    }
    if (r.category == Category::kComm) {
      if (r.collective.empty()) {
        // Foreign trace: the kernel names the collective; one stream stands for one
        // communicator and its order for the sequence (TraceLens' fallback).
        for (std::uint32_t k : op.acts) {
          if (keys_[k].kind != ActivityKind::kKernel) continue;
          r.collective = collective_from_nccl_kernel(names_[keys_[k].name]);
          if (!r.collective.empty()) break;
        }
        if (!r.collective.empty()) {
          r.comm = "stream" + std::to_string(op.stream);
          r.seq = stream_seq_[op.stream]++;
        }
      }
      if (!r.collective.empty() && r.comm_size == 0) r.comm_size = world_size_;
    } else {
      r.collective.clear();
      r.comm.clear();
      r.comm_size = 0;
      r.seq = -1;
    }
    ++sum_.ops[index_of(r.category)];
    st.ops.push_back(std::move(r));
  }
  std::stable_sort(st.ops.begin(), st.ops.end(),
                   [](const OpRecord& a, const OpRecord& b) { return a.start_ns < b.start_ns; });
  ++sum_.steps;
  on_step_(header_, std::move(st));
}

// One pass over the activities in launch order. marks_only: only learn which commprof
// categories launched work onto which stream (needed before any op can be classified).
class ActivityCorrelator::Pass {
 public:
  Pass(ActivityCorrelator& c, bool marks_only)
      : c_(c), marks_only_(marks_only), act_(c.db_, activity_query(c.schema_)) {
    if (!c.domain_.ids.empty()) nvtx_.emplace(c.db_, op_range_query(c.schema_, c.domain_.ids));
    nvtx_pending_ = nvtx_ && nvtx_->step();
  }

  void run() {
    while (act_.step()) {
      const auto kind = static_cast<ActivityKind>(act_.i64(0));
      const std::int64_t launch = act_.i64(7);
      const std::int64_t tid = act_.null(8) ? -1 : act_.i64(8);
      if (!marks_only_) {
        ++c_.sum_.activities;
        if (kind == ActivityKind::kKernel) ++c_.sum_.kernels;
      }
      check_one_process();
      open_ranges_until(launch);
      OpenRange* range = innermost_range(tid, launch);
      if (marks_only_) {
        if (range) {
          c_.stream_marks_[act_.i64(3)] |=
              static_cast<std::uint8_t>(1u << index_of(range->category));
        }
        continue;
      }
      // The step.
      while (cur_step_ < c_.steps_.size() && c_.steps_[cur_step_].end < launch) ++cur_step_;
      if (cur_step_ >= c_.steps_.size() || c_.steps_[cur_step_].start > launch) {
        ++c_.sum_.outside_steps;
        continue;
      }
      if (emitted_ < cur_step_) flush_until(cur_step_);
      add_activity(kind, range);
    }
    if (!marks_only_) flush_until(c_.steps_.size());
  }

 private:
  void check_one_process() {
    if (act_.null(6)) return;
    if (!pid_) pid_ = act_.i64(6);
    if (*pid_ != act_.i64(6)) {
      c_.db_.fail(
          "GPU activity of more than one process: import-nsys expects one report per rank "
          "(put nsys in front of the application, not of the launcher)");
    }
  }

  // Pushes the op ranges that began by `launch` onto their thread's stack.
  void open_ranges_until(std::int64_t launch) {
    while (nvtx_pending_ && nvtx_->i64(0) <= launch) {
      const auto c = c_.domain_.categories.find(nvtx_->i64(3));
      if (c != c_.domain_.categories.end()) {
        OpenRange r = range_of_row(c->second);
        auto& stack = open_[nvtx_->i64(2)];
        while (!stack.empty() && stack.back().end < r.start) pop_range(stack);
        stack.push_back(std::move(r));
      }
      nvtx_pending_ = nvtx_->step();
    }
  }

  OpenRange range_of_row(Category category) {
    OpenRange r;
    r.start = nvtx_->i64(0);
    r.end = nvtx_->i64(1);
    r.id = next_range_id_++;
    r.category = category;
    r.name = nvtx_->text(4);
    r.bytes = nvtx_->null(5) ? 0 : static_cast<std::uint64_t>(nvtx_->i64(5));
    if (r.category != Category::kComm) return r;
    ParsedOpRangeText parsed = parse_op_range_text(r.name);
    if (parsed.tag) {
      // commprof names the collective, the communicator (tp1, not just "tp") and its size; the
      // payload is the communicator's own sequence number, the same on every rank of the group
      // whatever the capture left out.
      r.name = std::move(parsed.name);
      r.bytes = parsed.tag->bytes;
      r.collective = std::move(parsed.tag->collective);
      r.comm = std::move(parsed.tag->comm);
      r.comm_size = parsed.tag->comm_size;
      r.seq = !nvtx_->null(6) ? nvtx_->i64(6) : !nvtx_->null(5) ? nvtx_->i64(5) : -1;
      if (!marks_only_) ++c_.sum_.comm_ranges_tagged;
    } else {
      // Exports of commprof before the tag: the collective and the communicator's kind from
      // the op name, the sequence number by counting per kind.
      std::tie(r.collective, r.comm) = collective_of_op_name(r.name);
      if (!r.collective.empty()) r.seq = comm_seq_[r.comm]++;
      if (!marks_only_) ++c_.sum_.comm_ranges_by_name;
    }
    return r;
  }

  // The innermost commprof op range around the launch, on the launching thread.
  OpenRange* innermost_range(std::int64_t tid, std::int64_t launch) {
    if (tid < 0) return nullptr;
    auto it = open_.find(tid);
    if (it == open_.end()) return nullptr;
    auto& stack = it->second;
    while (!stack.empty() && stack.back().end < launch) pop_range(stack);
    return stack.empty() ? nullptr : &stack.back();
  }

  void pop_range(std::vector<OpenRange>& stack) {
    range_op_.erase(stack.back().id);
    stack.pop_back();
  }

  // The current row joins the op of its range, or becomes an op of its own.
  void add_activity(ActivityKind kind, const OpenRange* range) {
    const std::int64_t stream = act_.i64(3);
    const std::string name = kind == ActivityKind::kKernel   ? act_.text(9)
                             : kind == ActivityKind::kMemcpy ? memcpy_name(act_.i64(5))
                                                             : std::string("Memset");
    const std::uint32_t key = c_.key_of(kind, name, stream);
    const char* what = kActivityRow[static_cast<int>(kind)];
    check_span(c_.db_, act_.i64(1), act_.i64(2), what);
    // Both within +-2^60 ns, so the sums cannot overflow; on the job's clock they must stay so.
    const std::int64_t s_ns =
        bounded_time(c_.db_, act_.i64(1) + c_.shift_, what, " on the job's clock");
    const std::int64_t e_ns =
        bounded_time(c_.db_, act_.i64(2) + c_.shift_, what, " on the job's clock");
    pending_last_end_ = std::max(pending_last_end_, e_ns);
    if (range) {
      auto found = range_op_.find(range->id);
      if (found != range_op_.end()) {
        PendingOp& op = pending_[found->second];
        op.rec.start_ns = std::min(op.rec.start_ns, s_ns);
        op.rec.end_ns = std::max(op.rec.end_ns, e_ns);
        if (std::find(op.acts.begin(), op.acts.end(), key) == op.acts.end()) op.acts.push_back(key);
        return;
      }
    }
    pending_.emplace_back();
    PendingOp& op = pending_.back();
    op.stream = stream;
    op.acts.push_back(key);
    op.rec.start_ns = s_ns;
    op.rec.end_ns = e_ns;
    if (range) {
      op.range = range->category;
      op.rec.name = range->name;
      op.rec.bytes = range->bytes;
      op.rec.collective = range->collective;
      op.rec.comm = range->comm;
      op.rec.comm_size = range->comm_size;
      op.rec.seq = range->seq;
      range_op_[range->id] = pending_.size() - 1;
    } else {
      op.rec.name = name;
      op.rec.bytes = kind == ActivityKind::kKernel ? 0 : static_cast<std::uint64_t>(act_.i64(4));
    }
  }

  // Hands on every step before `step`. The pending ops belong to step `emitted_` (an activity of
  // step k is only added once every step before k has been handed on); later ones are empty.
  void flush_until(std::size_t step) {
    for (; emitted_ < step; ++emitted_) {
      c_.finish_step(c_.steps_[emitted_], pending_, pending_last_end_);
      pending_.clear();
      range_op_.clear();
      pending_last_end_ = 0;
    }
  }

  ActivityCorrelator& c_;
  const bool marks_only_;
  Stmt act_;
  std::optional<Stmt> nvtx_;
  bool nvtx_pending_ = false;                                      // a row read, not yet pushed
  std::unordered_map<std::int64_t, std::vector<OpenRange>> open_;  // by globalTid
  std::unordered_map<std::uint64_t, std::size_t> range_op_;        // open range id -> pending op
  std::unordered_map<std::string, std::int64_t> comm_seq_;
  std::uint64_t next_range_id_ = 1;
  std::optional<std::int64_t> pid_;
  std::size_t cur_step_ = 0;
  std::size_t emitted_ = 0;  // steps handed on so far
  std::vector<PendingOp> pending_;
  std::int64_t pending_last_end_ = 0;
};

void ActivityCorrelator::run() {
  if (!domain_.ids.empty()) Pass(*this, true).run();
  Pass(*this, false).run();
}

}  // namespace commprof::nsys
