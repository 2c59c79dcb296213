// SPDX-License-Identifier: MIT
// Backend::idle_for on CUDA: the stream held for a set time while the device computes nothing.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace commprof {

/// Enqueues on `stream` one thread that polls the GPU's clock (%globaltimer) until `ns`
/// nanoseconds have passed: the stream's next work starts that much later, and the SMs are free
/// meanwhile but for that one thread. A host callback (cudaLaunchHostFunc) would leave the device
/// wholly idle but costs the stream 40 to 100 µs more than asked, varying with how soon CUDA's
/// callback thread wakes (measured on an H100, docs/BENCHMARKS.md): too much for replaying gaps
/// of tens of microseconds. The kernel carries no op's activity tag, so no op's time counts it.
void launch_gap(std::uint64_t ns, cudaStream_t stream);

}  // namespace commprof
