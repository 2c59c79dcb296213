// SPDX-License-Identifier: MIT
// libnccl-profiler-null.so: a profiler plugin that asks NCCL for the events
// COMMPROF_NULL_PROFILER_MASK names (NCCL's activation mask, a whole number; none where unset)
// and does nothing with them. Loaded in place of commprof's plugin under the same mask, it leaves
// what NCCL's own delivery of those events costs a job, which the `plugincost` phase of
// scripts/gpu-bench.sh sets beside commprof's plugin (modes nullcalls, nullcoll): the part of
// the plugin's cost that no plugin asking for every call could avoid.
#include <cstdlib>

#include "src/nccl_profiler/nccl_profiler_abi.hpp"

namespace {

constexpr NcclResult kOk = kNcclSuccess;

NcclResult init(void** context, std::uint64_t, int* mask, const char*, int, int, int,
                NcclDebugLogger) {
  const char* m = std::getenv("COMMPROF_NULL_PROFILER_MASK");
  *mask = m != nullptr ? std::atoi(m) : 0;
  *context = nullptr;
  return kOk;
}
NcclResult start(void*, void** handle, NcclEventDescrV5*) {
  *handle = nullptr;
  return kOk;
}
NcclResult stop(void*) { return kOk; }
NcclResult record(void*, int, NcclEventStateArgs*) { return kOk; }
NcclResult finalize(void*) { return kOk; }

}  // namespace

extern "C" {
__attribute__((visibility("default")))
NcclProfilerV5 ncclProfiler_v5 = {"null", init, start, stop, record, finalize};
}
