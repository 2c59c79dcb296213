// SPDX-License-Identifier: MIT
// NVTX ranges in the "commprof" domain, so an Nsight Systems timeline explains itself: one range
// per op (category COMP, COMM or MEM with its fixed colour, the op's name, its bytes as payload)
// and one per step or bench size. Implemented with nvtx3.hpp when the CUDA toolkit's headers are
// present (annotation_nvtx.cpp), as no-ops otherwise (annotation_none.cpp). NVTX costs a
// function-pointer check when no tool is attached; --no-nvtx turns even that off.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "src/backend/category.hpp"

namespace commprof {

/// Pushes a range on construction, pops it on destruction, on the calling thread.
class ScopedAnnotation {
 public:
  ScopedAnnotation(const std::string& name, std::uint64_t bytes,
                   std::optional<Category> category = std::nullopt);
  ~ScopedAnnotation();
  ScopedAnnotation(const ScopedAnnotation&) = delete;
  ScopedAnnotation& operator=(const ScopedAnnotation&) = delete;

 private:
  bool active_ = false;
};

/// Process-wide switch (--no-nvtx); on by default.
void set_annotations_enabled(bool enabled);
bool annotations_enabled();
/// False in builds without NVTX headers.
bool annotations_compiled_in();

}  // namespace commprof
