// SPDX-License-Identifier: MIT
#include "workloads/pipeline_schedule.hpp"

#include <algorithm>
#include <utility>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/core/name_table.hpp"

namespace commprof {

namespace {
constexpr NamedValue<PpSchedule> kScheduleNames[] = {{PpSchedule::kGpipe, "gpipe"},
                                                     {PpSchedule::k1F1B, "1f1b"},
                                                     {PpSchedule::kInterleaved, "interleaved"}};
}  // namespace

PpSchedule parse_schedule(const std::string& text) {
  return parse_name(kScheduleNames, text, "unknown pipeline schedule");
}

const char* schedule_name(PpSchedule s) { return name_of(kScheduleNames, s); }

namespace {

/// One part of a transfer: sent or received, an activation or a gradient, whose micro-batch and
/// chunk. Activations go to the next stage and come from the previous; gradients the other way.
struct Part {
  bool send = true;
  bool activation = true;
  int mb = 0;
  int chunk = 0;
};

class Builder {
 public:
  /// `ring`: the last stage's next is the first (interleaving's chunk boundary); otherwise the
  /// ends have no neighbour there and parts towards it are dropped.
  Builder(int stages, int stage, bool ring)
      : prev_(stage > 0 ? stage - 1
              : ring    ? stages - 1
                        : -1),
        next_(stage + 1 < stages ? stage + 1
              : ring             ? 0
                                 : -1) {}

  void forward(int mb, int chunk = 0) { pass(PipeItem::Kind::kForward, mb, chunk); }
  void backward(int mb, int chunk = 0) { pass(PipeItem::Kind::kBackward, mb, chunk); }
  void recv_forward(int mb) { transfer({{false, true, mb, 0}}); }
  void send_forward(int mb) { transfer({{true, true, mb, 0}}); }
  void recv_backward(int mb) { transfer({{false, false, mb, 0}}); }
  void send_backward(int mb) { transfer({{true, false, mb, 0}}); }
  void send_forward_recv_backward(int mb) {
    transfer({{true, true, mb, 0}, {false, false, mb, 0}});
  }
  void send_backward_recv_forward(int mb) {
    transfer({{true, false, mb, 0}, {false, true, mb, 0}});
  }

  /// One group of the parts that have a peer; nothing when none has. Sends and receives each
  /// keep activations before gradients, the order every rank posts them in.
  void transfer(std::vector<Part> parts) {
    std::stable_sort(parts.begin(), parts.end(),
                     [](const Part& a, const Part& b) { return a.activation && !b.activation; });
    PipeItem t;
    t.kind = PipeItem::Kind::kTransfer;
    int sends = 0, recvs = 0;
    for (const Part& p : parts) {
      const int peer = p.send == p.activation ? next_ : prev_;
      if (peer < 0 || p.mb < 0) continue;  // no neighbour there, or nothing to send
      if (sends + recvs == 0) {
        t.micro_batch = p.mb;
        t.chunk = p.chunk;
      }
      if (p.send) {
        t.sends[sends] = {peer, p.activation};
        t.send_mb[sends] = p.mb;
        t.send_chunk[sends++] = p.chunk;
      } else {
        t.recvs[recvs] = {peer, p.activation};
        t.recv_mb[recvs] = p.mb;
        t.recv_chunk[recvs++] = p.chunk;
      }
    }
    if (sends + recvs > 0) items.push_back(t);
  }

  std::vector<PipeItem> items;

 private:
  void pass(PipeItem::Kind kind, int mb, int chunk) {
    PipeItem it;
    it.kind = kind;
    it.micro_batch = mb;
    it.chunk = chunk;
    items.push_back(it);
  }
  int prev_;
  int next_;
};

// 1F1B as Megatron-LM's forward_backward_pipelining_without_interleaving.
void one_f_one_b(Builder& b, int stages, int stage, int m) {
  const int warmup = std::min(stages - stage - 1, m);
  const int remaining = m - warmup;
  for (int i = 0; i < warmup; ++i) {
    b.recv_forward(i);
    b.forward(i);
    b.send_forward(i);
  }
  if (remaining > 0) b.recv_forward(warmup);
  for (int i = 0; i < remaining; ++i) {
    const int f = warmup + i;
    b.forward(f);
    b.send_forward_recv_backward(f);
    b.backward(i);
    if (i == remaining - 1) {
      b.send_backward(i);
    } else {
      b.send_backward_recv_forward(i);
    }
  }
  for (int i = 0; i < warmup; ++i) {
    const int mb = remaining + i;
    b.recv_backward(mb);
    b.backward(mb);
    b.send_backward(mb);
  }
}

// Megatron-Core's forward_backward_pipelining_with_interleaving (megatron/core/pipeline_parallel/
// schedules.py) as it runs without p2p overlap, its default, with micro-batch groups of p (the
// default microbatch_group_size_per_vp_stage). Virtual micro-batch k runs micro-batch mb(k)
// through chunk chunk(k): groups of p micro-batches go through chunk 0, then chunk 1, …
// Backward k runs the chunks in reverse. Every stage first runs 2·(p−r−1) + (V−1)·p warm-up
// forwards; the chunk boundary sends the last stage's activations to the first stage's next
// chunk, and the first stage's gradients to the last stage's previous chunk.
class Interleaved {
 public:
  Interleaved(int stages, int stage, int m, int chunks)
      : p_(stages), r_(stage), v_(chunks), total_(m * chunks), b_(stages, stage, true) {
    for (int group = 0; group < m; group += p_) {
      for (int c = 0; c < v_; ++c) {
        for (int mb = group; mb < std::min(group + p_, m); ++mb) table_.emplace_back(mb, c);
      }
    }
    warmup_ = std::min(2 * (p_ - r_ - 1) + (v_ - 1) * p_, total_);
  }

  std::vector<PipeItem> build() {
    const bool all_warmup = warmup_ == total_;
    const int remaining = total_ - warmup_;
    if (r_ != 0) b_.transfer({recv(true, 0)});
    for (int k = 0; k < warmup_; ++k) {
      forward(k);
      auto [recv_prev, chunk] = from_previous(k, true);
      if (k == total_ - 1) recv_prev = false;
      std::vector<Part> parts = {send_output(k)};
      if (recv_prev) parts.push_back(recv(true, chunk));
      if (k == warmup_ - 1 && !all_warmup && r_ != p_ - 1) parts.push_back(recv(false, v_ - 1));
      b_.transfer(parts);
    }
    for (int k = 0; k < remaining; ++k) {
      const int f = k + warmup_;
      forward(f);
      backward(k);
      auto [recv_prev, fchunk] = from_previous(f, true);
      const auto [recv_next, bchunk] = from_previous(k, false);
      if (k == remaining - 1) recv_prev = false;
      std::vector<Part> parts = {send_output(f), send_grad(k)};
      if (recv_prev) parts.push_back(recv(true, fchunk));
      if (recv_next) parts.push_back(recv(false, bchunk));
      b_.transfer(parts);
    }
    if (all_warmup && r_ != p_ - 1) b_.transfer({recv(false, v_ - 1)});
    for (int k = remaining; k < total_; ++k) {
      backward(k);
      auto [recv_next, chunk] = from_previous(k, false);
      if (k == total_ - 1) recv_next = false;
      std::vector<Part> parts = {send_grad(k)};
      if (recv_next) parts.push_back(recv(false, chunk));
      b_.transfer(parts);
    }
    return std::move(b_.items);
  }

 private:
  int mb(int k) const { return table_[static_cast<std::size_t>(k % total_)].first; }
  int chunk(int k, bool forward) const {
    const int c = table_[static_cast<std::size_t>(k % total_)].second;
    return forward ? c : v_ - 1 - c;
  }
  void forward(int k) { b_.forward(mb(k), chunk(k, true)); }
  void backward(int k) { b_.backward(mb(k), chunk(k, false)); }

  // The output of forward k goes on unless it is the model's last chunk (the loss).
  Part send_output(int k) const {
    const int c = chunk(k, true);
    if (c == v_ - 1 && r_ == p_ - 1) return none();
    return {true, true, mb(k), c};
  }
  // The input gradient of backward k goes back unless it is the model's first chunk.
  Part send_grad(int k) const {
    const int c = chunk(k, false);
    if (c == 0 && r_ == 0) return none();
    return {true, false, mb(k), c};
  }
  // A receive for `c`: activations and gradients of a chunk arrive in micro-batch order, so the
  // n-th of a chunk and kind is for micro-batch n.
  Part recv(bool activation, int c) {
    int& n = (activation ? recv_act_ : recv_grad_)[static_cast<std::size_t>(c)];
    return {false, activation, n++, c};
  }
  static Part none() { return {true, true, -1, -1}; }

  // Megatron's recv_tensor_from_previous_stage: whether the stage receives after virtual
  // micro-batch k, and for which chunk. The leading stage (the first forward, the last
  // backward) is p−1 virtual micro-batches ahead of the stage feeding it around the ring, and
  // nothing comes from the model's last chunk in its direction.
  std::pair<bool, int> from_previous(int k, bool forward) const {
    const bool leading = forward ? r_ == 0 : r_ == p_ - 1;
    if (!leading) return {true, chunk(k + 1, forward)};
    if (k < p_ - 1) return {false, chunk(k + 1, forward)};
    const int c = chunk(k - (p_ - 1), forward);
    const bool recv = c != (forward ? v_ - 1 : 0);
    return {recv, forward ? c + 1 : c - 1};
  }

  int p_, r_, v_, total_;
  int warmup_ = 0;
  std::vector<std::pair<int, int>> table_;  // (micro-batch, chunk) of each virtual micro-batch
  std::array<int, 64> recv_act_{}, recv_grad_{};
  Builder b_;
};

}  // namespace

std::string schedule_problem(PpSchedule schedule, int stages, int m, int chunks) {
  if (schedule != PpSchedule::kInterleaved) {
    return chunks == 1 ? ""
                       : log::cat("--virtual-stages ", chunks,
                                  " needs --schedule interleaved (gpipe and 1f1b run one chunk)");
  }
  if (stages < 2) return "--schedule interleaved needs --pp 2 or more";
  if (chunks < 2 || chunks > 64) {
    return log::cat("--schedule interleaved needs --virtual-stages from 2 to 64, not ", chunks);
  }
  if (m % stages != 0) {
    return log::cat("--schedule interleaved runs micro-batches in groups of --pp: --micro-batches ",
                    m, " is not a multiple of --pp ", stages);
  }
  return "";
}

std::vector<PipeItem> pipeline_schedule(PpSchedule schedule, int stages, int stage, int m,
                                        int chunks) {
  if (const std::string problem = schedule_problem(schedule, stages, m, chunks); !problem.empty())
    throw ConfigError(problem);
  if (schedule == PpSchedule::kInterleaved) return Interleaved(stages, stage, m, chunks).build();
  Builder b(stages, stage, false);
  if (stages == 1) {
    for (int mb = 0; mb < m; ++mb) {
      b.forward(mb);
      b.backward(mb);
    }
  } else if (schedule == PpSchedule::kGpipe) {
    for (int mb = 0; mb < m; ++mb) {
      b.recv_forward(mb);
      b.forward(mb);
      b.send_forward(mb);
    }
    for (int mb = 0; mb < m; ++mb) {
      b.recv_backward(mb);
      b.backward(mb);
      b.send_backward(mb);
    }
  } else {
    one_f_one_b(b, stages, stage, m);
  }
  return std::move(b.items);
}

std::string compute_order(const std::vector<PipeItem>& items, bool chunks) {
  std::string out;
  for (const PipeItem& it : items) {
    if (it.kind == PipeItem::Kind::kTransfer) continue;
    if (!out.empty()) out += ' ';
    out += (it.kind == PipeItem::Kind::kForward ? "F" : "B") + std::to_string(it.micro_batch);
    if (chunks) out += "c" + std::to_string(it.chunk);
  }
  return out;
}

}  // namespace commprof
