// SPDX-License-Identifier: MIT
// The access patterns of ElementwiseCall other than the plain stream (AccessPattern), on the CPU.
#pragma once

#include "src/backend/work.hpp"

namespace commprof {

/// The pattern part of `call` (pattern_read, pattern_write) over real memory, in the same
/// slices and to the same result as the CUDA kernels: kStrided reads its elements one at a time
/// (from the first half of rows of two halves, with row_bytes) and writes them contiguously (each
/// written element the OR of those read so far in its slice); kScatterAdd adds source row s of each
/// slice, element by element, into destination row s mod rows. Throws ConfigError for a dtype
/// the scatter-add cannot add on the host (it adds float, double, int32 and int64, the types
/// the host backend supports).
void host_access_pattern(const ElementwiseCall& call);

}  // namespace commprof
