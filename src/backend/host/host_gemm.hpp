// SPDX-License-Identifier: MIT
// Real arithmetic for the host backend's COMP stream: a cache-blocked GEMM.
#pragma once

#include "src/backend/work.hpp"

namespace commprof {

/// C = A·B, column-major, float or double; throws ConfigError for other types.
void host_gemm(const GemmCall& call);

/// y = alpha·x + y, float or double.
void host_axpy(const AxpyCall& call);

}  // namespace commprof
