// SPDX-License-Identifier: MIT
// The host backend's arithmetic kernels (GEMM, AdamW, the memory-bound pass) run without the
// sanitizers' instrumentation in the asan and tsan builds. Each of their loops touches only
// memory the call proved in bounds before the loop (GemmCall::bounds_problem; indices wrapping
// within regions taken from the buffers' sizes), so per-access checks find nothing there, and
// they cost 5x (ASan + UBSan) to 26x (TSan) on a blocked GEMM: most of a sanitized workload
// run's time (docs/RELIABILITY.md). Everything around the kernels stays instrumented.
#pragma once

#define COMMPROF_UNINSTRUMENTED __attribute__((no_sanitize("address", "undefined", "thread")))
