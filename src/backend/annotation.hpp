// SPDX-License-Identifier: MIT
// NVTX ranges in the "commprof" domain, so an Nsight Systems timeline explains itself: one range
// per op (category COMP, COMM or MEM with its fixed colour, the op's name, its bytes as payload;
// a COMM op's range also names its collective and communicator, see op_range_text.hpp), one per
// step or bench size, and one around all measured steps (kMeasuredStepsRange) on which nsys can
// start and stop its capture. Implemented with nvtx3.hpp when the CUDA toolkit's headers are
// present (annotation_nvtx.cpp), as no-ops otherwise (annotation_none.cpp); annotation.cpp holds
// what both share. NVTX costs a function-pointer check when no tool is attached; --no-nvtx turns
// even that off.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "src/backend/work.hpp"
#include "src/timeline/category.hpp"
#include "src/timeline/op_range_text.hpp"

namespace commprof {

/// Pushes a range on construction, pops it on destruction, on the calling thread.
class ScopedAnnotation {
 public:
  /// A range named `name` with `bytes` as its (uint64) payload.
  ScopedAnnotation(const std::string& name, std::uint64_t bytes,
                   std::optional<Category> category = std::nullopt);
  /// An op's range. COMP and MEM work: as above, the label's name and bytes. Communication
  /// (CollectiveCall, P2PCall): the text also names the collective, the communicator, its size
  /// and the bytes (format_op_range_text), and the payload is the label's sequence number as
  /// int64 (-1: none), so importers can match the op across ranks.
  ScopedAnnotation(const OpLabel& label, const Work& work, Category category);
  ~ScopedAnnotation();
  ScopedAnnotation(const ScopedAnnotation&) = delete;
  ScopedAnnotation& operator=(const ScopedAnnotation&) = delete;

 private:
  bool active_ = false;    // pushed to NVTX
  bool observed_ = false;  // reported to the observer
};

/// The range named kMeasuredStepsRange: pushed on construction, popped on destruction, on the
/// calling thread. PlanExecutor::run holds one from the first measured step to the end.
class MeasuredStepsRange {
 public:
  MeasuredStepsRange();
  ~MeasuredStepsRange();
  MeasuredStepsRange(const MeasuredStepsRange&) = delete;
  MeasuredStepsRange& operator=(const MeasuredStepsRange&) = delete;

 private:
  bool active_ = false;
  bool observed_ = false;
};

/// Process-wide switch (--no-nvtx); on by default.
void set_annotations_enabled(bool enabled);
bool annotations_enabled();
/// False in builds without NVTX headers.
bool annotations_compiled_in();

/// One push or pop, as an AnnotationObserver sees it.
struct AnnotationEvent {
  bool push = true;                  ///< false: the pop of the innermost range of the thread
  std::string text;                  ///< push: the range's message, exactly as NVTX gets it
  std::optional<Category> category;  ///< push: the op's category; none for steps and the like
  std::int64_t payload = 0;          ///< push: bytes, or a COMM op's sequence number
  bool payload_is_sequence = false;  ///< push: the payload is a sequence number (int64)
};
using AnnotationObserver = void (*)(const AnnotationEvent&);
/// Test hook: `observer` is called for every range commprof pushes and pops, on the pushing
/// thread, whether or not NVTX is compiled in or enabled (what the code asks for, not what a
/// tool receives); nullptr removes it. Set it while no range is open.
void set_annotation_observer(AnnotationObserver observer);

namespace detail {
// What annotation_nvtx.cpp or annotation_none.cpp does for the shared code in annotation.cpp.
void nvtx_push(const std::string& text, std::optional<Category> category, std::int64_t payload,
               bool payload_is_sequence);
void nvtx_push_measured_steps();
void nvtx_pop();
}  // namespace detail

}  // namespace commprof
