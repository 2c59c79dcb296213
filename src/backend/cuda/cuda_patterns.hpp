// SPDX-License-Identifier: MIT
// Verifiable data written and checked on the GPU (src/collective/pattern.hpp formulas), so a 1
// GiB buffer is checked without copying it to the host.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "src/collective/pattern.hpp"
#include "src/core/dtype.hpp"

namespace commprof {

void launch_fill(void* data, DType dtype, std::size_t count, const FillPattern& pattern,
                 cudaStream_t stream);
/// Adds the number of mismatching elements to *device_counter (an unsigned long long on the GPU).
void launch_count_mismatches(const void* data, DType dtype, std::size_t count,
                             const ExpectPattern& expected, unsigned long long* device_counter,
                             cudaStream_t stream);

}  // namespace commprof
