// SPDX-License-Identifier: MIT
// What NVTX builds and builds without NVTX share: the texts and payloads of the ranges, and the
// observer tests use. The NVTX calls themselves are in annotation_nvtx.cpp (annotation_none.cpp).
#include "src/backend/annotation.hpp"

#include <atomic>

#include "src/backend/communicator.hpp"
#include "src/collective/collective_kind.hpp"
#include "src/timeline/op_range_text.hpp"

namespace commprof {
namespace {

std::atomic<AnnotationObserver> g_observer{nullptr};

AnnotationObserver observer() { return g_observer.load(std::memory_order_acquire); }

/// The communicator and the collective's name (a static string) of communication work (a
/// collective or send/recv); both null for COMP and MEM work.
struct CommOfWork {
  const Communicator* comm = nullptr;
  const char* collective = nullptr;
};
CommOfWork comm_of_work(const Work& work) {
  if (const auto* c = std::get_if<CollectiveCall>(&work)) {
    return {c->comm, collective_name(c->kind)};
  }
  if (const auto* p = std::get_if<P2PCall>(&work)) {
    // As the executor names them in its own records.
    return {p->comm, p2p_name(p->sends, p->recvs)};
  }
  return {};
}

// The tagged text of the last COMM range this thread pushed. A bench loop submits the same
// collective back to back: formatting the tag costs ~0.2 us per range (ten times the NVTX call
// without a tool attached), comparing it with the last one a fraction of that. The communicator
// is compared by name too, as a new one may reuse a destroyed one's address. Used at once,
// before this thread pushes another range.
const std::string& tagged_text(const OpLabel& label, const CommOfWork& c) {
  thread_local std::string name, comm, text;
  thread_local const char* collective = nullptr;
  thread_local const Communicator* comm_ptr = nullptr;
  thread_local std::uint64_t bytes = 0;
  thread_local int size = 0;
  if (text.empty() || c.comm != comm_ptr || c.collective != collective || label.bytes != bytes ||
      label.name != name || c.comm->name() != comm || c.comm->size() != size) {
    name = label.name;
    comm = c.comm->name();
    collective = c.collective;
    comm_ptr = c.comm;
    bytes = label.bytes;
    size = c.comm->size();
    text = format_op_range_text(label.name, {c.collective, comm, size, label.bytes});
  }
  return text;
}

}  // namespace

ScopedAnnotation::ScopedAnnotation(const std::string& name, std::uint64_t bytes,
                                   std::optional<Category> category) {
  const auto payload = static_cast<std::int64_t>(bytes);
  if (const AnnotationObserver o = observer()) {
    o(AnnotationEvent{true, name, category, payload, false});
    observed_ = true;
  }
  if (annotations_enabled()) {
    detail::nvtx_push(name, category, payload, false);
    active_ = true;
  }
}

ScopedAnnotation::ScopedAnnotation(const OpLabel& label, const Work& work, Category category) {
  const AnnotationObserver o = observer();
  const bool enabled = annotations_enabled();
  if (o == nullptr && !enabled) return;  // --no-nvtx: not even the text is built
  const CommOfWork comm = comm_of_work(work);
  // COMP and MEM ops keep their plain name and bytes; only communication carries the tag and,
  // as payload, its sequence number.
  const bool is_sequence = comm.comm != nullptr;
  const std::string& text = is_sequence ? tagged_text(label, comm) : label.name;
  const std::int64_t payload = is_sequence ? label.seq : static_cast<std::int64_t>(label.bytes);
  if (o != nullptr) {
    o(AnnotationEvent{true, text, category, payload, is_sequence});
    observed_ = true;
  }
  if (enabled) {
    detail::nvtx_push(text, category, payload, is_sequence);
    active_ = true;
  }
}

ScopedAnnotation::~ScopedAnnotation() {
  if (active_) detail::nvtx_pop();
  if (observed_) {
    if (const AnnotationObserver o = observer()) o(AnnotationEvent{false, {}, {}, 0, false});
  }
}

MeasuredStepsRange::MeasuredStepsRange() {
  if (const AnnotationObserver o = observer()) {
    o(AnnotationEvent{true, kMeasuredStepsRange, std::nullopt, 0, false});
    observed_ = true;
  }
  if (annotations_enabled()) {
    detail::nvtx_push_measured_steps();
    active_ = true;
  }
}

MeasuredStepsRange::~MeasuredStepsRange() {
  if (active_) detail::nvtx_pop();
  if (observed_) {
    if (const AnnotationObserver o = observer()) o(AnnotationEvent{false, {}, {}, 0, false});
  }
}

void set_annotation_observer(AnnotationObserver o) {
  g_observer.store(o, std::memory_order_release);
}

}  // namespace commprof
