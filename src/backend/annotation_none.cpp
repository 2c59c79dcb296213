// SPDX-License-Identifier: MIT
// Builds without the CUDA toolkit have no NVTX headers: annotations compile to nothing.
#include "src/backend/annotation.hpp"

namespace commprof {

ScopedAnnotation::ScopedAnnotation(const std::string&, std::uint64_t, std::optional<Category>) {}
ScopedAnnotation::~ScopedAnnotation() = default;
void set_annotations_enabled(bool) {}
bool annotations_enabled() { return false; }
bool annotations_compiled_in() { return false; }

}  // namespace commprof
