// SPDX-License-Identifier: MIT
// What NVTX builds and builds without NVTX share: the texts and payloads of the ranges, and the
// observer tests use. The NVTX calls themselves are in annotation_nvtx.cpp (annotation_none.cpp).
#include "src/backend/annotation.hpp"

#include <atomic>

#include "src/backend/op_range_text.hpp"

namespace commprof {
namespace {

std::atomic<AnnotationObserver> g_observer{nullptr};

AnnotationObserver observer() { return g_observer.load(std::memory_order_acquire); }

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
  const std::optional<OpRangeTag> tag = op_range_tag(label, work);
  // COMP and MEM ops keep their plain name and bytes; only communication carries the tag and,
  // as payload, its sequence number.
  const std::string tagged = tag ? format_op_range_text(label.name, *tag) : std::string();
  const std::string& text = tag ? tagged : label.name;
  const std::int64_t payload = tag ? label.seq : static_cast<std::int64_t>(label.bytes);
  const bool is_sequence = tag.has_value();
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
