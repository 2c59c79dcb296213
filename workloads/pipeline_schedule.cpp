// SPDX-License-Identifier: MIT
#include "workloads/pipeline_schedule.hpp"

#include <algorithm>

#include "src/core/errors.hpp"
#include "src/core/name_table.hpp"

namespace commprof {

namespace {
constexpr NamedValue<PpSchedule> kScheduleNames[] = {{PpSchedule::kGpipe, "gpipe"},
                                                     {PpSchedule::k1F1B, "1f1b"}};
}  // namespace

PpSchedule parse_schedule(const std::string& text) {
  return parse_name(kScheduleNames, text, "unknown pipeline schedule");
}

const char* schedule_name(PpSchedule s) { return name_of(kScheduleNames, s); }

namespace {

class Builder {
 public:
  Builder(int stages, int stage)
      : prev_(stage > 0 ? stage - 1 : -1), next_(stage + 1 < stages ? stage + 1 : -1) {}

  void forward(int mb) { items.push_back({PipeItem::Kind::kForward, mb}); }
  void backward(int mb) { items.push_back({PipeItem::Kind::kBackward, mb}); }
  void recv_forward(int mb) { transfer(mb, -1, prev_, true, true); }
  void send_forward(int mb) { transfer(mb, next_, -1, true, true); }
  void recv_backward(int mb) { transfer(mb, -1, next_, false, false); }
  void send_backward(int mb) { transfer(mb, prev_, -1, false, false); }
  void send_forward_recv_backward(int mb) { transfer(mb, next_, next_, true, false); }
  void send_backward_recv_forward(int mb) { transfer(mb, prev_, prev_, false, true); }

  std::vector<PipeItem> items;

 private:
  void transfer(int mb, int send, int recv, bool send_fwd, bool recv_fwd) {
    if (send < 0 && recv < 0) return;  // first or last stage: nobody on that side
    PipeItem t;
    t.kind = PipeItem::Kind::kTransfer;
    t.micro_batch = mb;
    t.send_peer = send;
    t.recv_peer = recv;
    t.send_is_forward = send_fwd;
    t.recv_is_forward = recv_fwd;
    items.push_back(t);
  }
  int prev_;
  int next_;
};

}  // namespace

std::vector<PipeItem> pipeline_schedule(PpSchedule schedule, int stages, int stage, int m) {
  Builder b(stages, stage);
  if (stages == 1) {
    for (int mb = 0; mb < m; ++mb) {
      b.forward(mb);
      b.backward(mb);
    }
    return b.items;
  }
  if (schedule == PpSchedule::kGpipe) {
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
    return b.items;
  }
  // 1F1B as Megatron-LM's forward_backward_pipelining_without_interleaving.
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
  return b.items;
}

std::string compute_order(const std::vector<PipeItem>& items) {
  std::string out;
  for (const PipeItem& it : items) {
    if (it.kind == PipeItem::Kind::kTransfer) continue;
    if (!out.empty()) out += ' ';
    out += (it.kind == PipeItem::Kind::kForward ? "F" : "B") + std::to_string(it.micro_batch);
  }
  return out;
}

}  // namespace commprof
