// SPDX-License-Identifier: MIT
// Builds without the CUDA toolkit have no NVTX headers: annotations compile to nothing (an
// observer set by a test still sees them, see annotation.cpp).
#include "src/backend/annotation.hpp"

namespace commprof {

void set_annotations_enabled(bool) {}
bool annotations_enabled() { return false; }
bool annotations_compiled_in() { return false; }

namespace detail {
void nvtx_push(const std::string&, std::optional<Category>, std::int64_t, bool) {}
void nvtx_push_measured_steps() {}
void nvtx_pop() {}
}  // namespace detail

}  // namespace commprof
