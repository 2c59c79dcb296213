// SPDX-License-Identifier: MIT
// Compiled by scripts/check-nccl-profiler-abi.sh, never by the build: commprof's own declaration
// of NCCL's profiler plugin ABI (src/nccl_profiler/nccl_profiler_abi.hpp) and the headers NCCL is
// built with (src/include/plugin/profiler/profiler_v4.h, profiler_v5.h of an NCCL source tree) in
// one translation unit. Every field the plugin declares must lie at NCCL's offset with NCCL's size
// and kind (pointer, integer, floating point); every struct and union must have NCCL's size and
// alignment; every function of the tables NCCL's parameters (count, sizes, kinds); the event-type
// bits and the kernel channel's stop state NCCL's values. The script defines
// COMMPROF_CHECK_V5 where the tree has version 5 (NCCL 2.28 and later).
#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

// What NCCL's build declares before its profiler headers: the result and logger types, here from
// NCCL's own headers for plugins (the example profiler's nccl/err.h and nccl/common.h), and
// ncclPid_t, which 2.30's headers take from its os.h (pid_t on Linux). os.h itself needs the
// generated nccl.h, so it is marked as included; nccl_profiler.h then gives the event types and
// states and includes profiler_v1.h .. profiler_v5.h.
// clang-format off
#include "nccl/err.h"
#include "nccl/common.h"
// clang-format on
typedef pid_t ncclPid_t;
#define NCCL_OS_H_
#include "plugin/nccl_profiler.h"
#include "src/nccl_profiler/nccl_profiler_abi.hpp"

namespace {

enum class Kind { kNone, kPointer, kInteger, kFloat, kOther };

template <class T>
constexpr Kind kind() {
  if constexpr (std::is_void_v<T>) return Kind::kNone;
  if constexpr (std::is_pointer_v<T>) return Kind::kPointer;
  if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) return Kind::kInteger;
  if constexpr (std::is_floating_point_v<T>) return Kind::kFloat;
  return Kind::kOther;
}

template <class T>
constexpr std::size_t size_of() {
  if constexpr (std::is_void_v<T>) {
    return 0;
  } else {
    return sizeof(T);
  }
}

// A function pointer's return and parameters as (size, kind) pairs: what the calling convention
// sees. NCCL's enums (ncclResult_t, the log level, the event state) are ints to it, as ours are.
template <class F>
struct Signature;
template <class R, class... A>
struct Signature<R (*)(A...)> {
  static constexpr bool variadic = false;
  static constexpr std::size_t count = sizeof...(A) + 1;
  static constexpr std::array<std::size_t, count> sizes = {size_of<R>(), size_of<A>()...};
  static constexpr std::array<Kind, count> kinds = {kind<R>(), kind<A>()...};
};
template <class R, class... A>
struct Signature<R (*)(A..., ...)> {
  static constexpr bool variadic = true;
  static constexpr std::size_t count = sizeof...(A) + 1;
  static constexpr std::array<std::size_t, count> sizes = {size_of<R>(), size_of<A>()...};
  static constexpr std::array<Kind, count> kinds = {kind<R>(), kind<A>()...};
};

template <class Ours, class Theirs>
constexpr bool same_signature() {
  using O = Signature<Ours>;
  using T = Signature<Theirs>;
  if (O::variadic != T::variadic || O::count != T::count) return false;
  for (std::size_t i = 0; i < O::count; ++i) {
    if (O::sizes[i] != T::sizes[i] || O::kinds[i] != T::kinds[i]) return false;
  }
  return true;
}

template <class T>
using Bare = std::remove_cv_t<std::remove_reference_t<T>>;

}  // namespace

// One field: ours (type O, member path `of`) against NCCL's (type T, member path `tf`).
#define SAME_FIELD(O, of, T, tf)                                                \
  static_assert(offsetof(O, of) == offsetof(T, tf),                             \
                #O "." #of ": offset differs from " #T "." #tf);                \
  static_assert(sizeof(std::declval<O&>().of) == sizeof(std::declval<T&>().tf), \
                #O "." #of ": size differs from " #T "." #tf);                  \
  static_assert(kind<Bare<decltype(std::declval<O&>().of)>>() ==                \
                    kind<Bare<decltype(std::declval<T&>().tf)>>(),              \
                #O "." #of ": kind (pointer, integer, floating point) differs from " #T "." #tf)
// One struct or union; and one part of a descriptor's union (an event kind's fields) as a whole.
#define SAME_LAYOUT(O, T)                                              \
  static_assert(sizeof(O) == sizeof(T), #O ": size differs from " #T); \
  static_assert(alignof(O) == alignof(T), #O ": alignment differs from " #T)
#define SAME_PART(O, op, T, tp)                                  \
  static_assert(offsetof(O, op) == offsetof(T, tp),              \
                #O "." #op ": offset differs from " #T "." #tp); \
  SAME_LAYOUT(decltype(O::op), decltype(T::tp))
#define SAME_FUNCTION(O, T, f)                                                \
  static_assert(same_signature<decltype(O::f), decltype(T::f)>(),             \
                #O "::" #f ": return or parameters differ from " #T "::" #f); \
  SAME_FIELD(O, f, T, f)

// One value (ours and NCCL's are enums of different types: compared as numbers).
#define SAME_VALUE(o, t) \
  static_assert(static_cast<long long>(o) == static_cast<long long>(t), #o " differs from " #t)

// Values: results, the event types the plugin asks for, the state it reads.
SAME_VALUE(kNcclSuccess, ncclSuccess);
SAME_VALUE(kNcclInternalError, ncclInternalError);
SAME_VALUE(kNcclProfileGroup, ncclProfileGroup);
SAME_VALUE(kNcclProfileColl, ncclProfileColl);
SAME_VALUE(kNcclProfileP2p, ncclProfileP2p);
SAME_VALUE(kNcclProfileProxyOp, ncclProfileProxyOp);
SAME_VALUE(kNcclProfileProxyStep, ncclProfileProxyStep);
SAME_VALUE(kNcclProfileProxyCtrl, ncclProfileProxyCtrl);
SAME_VALUE(kNcclProfileKernelCh, ncclProfileKernelCh);
SAME_VALUE(kNcclProfileNetPlugin, ncclProfileNetPlugin);
SAME_VALUE(kNcclProfilerKernelChStop, ncclProfilerKernelChStop);
static_assert(same_signature<NcclDebugLogger, ncclDebugLogger_t>(),
              "NcclDebugLogger: return or parameters differ from ncclDebugLogger_t");

// --- version 4 (NCCL 2.27; 2.28 and later still read it) ---
using D4 = ncclProfilerEventDescr_v4_t;
SAME_LAYOUT(NcclEventDescrV4, D4);
SAME_FIELD(NcclEventDescrV4, type, D4, type);
SAME_FIELD(NcclEventDescrV4, parentObj, D4, parentObj);
SAME_FIELD(NcclEventDescrV4, rank, D4, rank);
SAME_PART(NcclEventDescrV4, coll, D4, coll);
SAME_FIELD(NcclEventDescrV4, coll.seqNumber, D4, coll.seqNumber);
SAME_FIELD(NcclEventDescrV4, coll.func, D4, coll.func);
SAME_FIELD(NcclEventDescrV4, coll.sendBuff, D4, coll.sendBuff);
SAME_FIELD(NcclEventDescrV4, coll.recvBuff, D4, coll.recvBuff);
SAME_FIELD(NcclEventDescrV4, coll.count, D4, coll.count);
SAME_FIELD(NcclEventDescrV4, coll.root, D4, coll.root);
SAME_FIELD(NcclEventDescrV4, coll.datatype, D4, coll.datatype);
SAME_FIELD(NcclEventDescrV4, coll.nChannels, D4, coll.nChannels);
SAME_FIELD(NcclEventDescrV4, coll.nWarps, D4, coll.nWarps);
SAME_FIELD(NcclEventDescrV4, coll.algo, D4, coll.algo);
SAME_FIELD(NcclEventDescrV4, coll.proto, D4, coll.proto);
SAME_PART(NcclEventDescrV4, p2p, D4, p2p);
SAME_FIELD(NcclEventDescrV4, p2p.func, D4, p2p.func);
SAME_FIELD(NcclEventDescrV4, p2p.buff, D4, p2p.buff);
SAME_FIELD(NcclEventDescrV4, p2p.datatype, D4, p2p.datatype);
SAME_FIELD(NcclEventDescrV4, p2p.count, D4, p2p.count);
SAME_FIELD(NcclEventDescrV4, p2p.peer, D4, p2p.peer);
SAME_FIELD(NcclEventDescrV4, p2p.nChannels, D4, p2p.nChannels);
SAME_PART(NcclEventDescrV4, proxyOp, D4, proxyOp);
SAME_FIELD(NcclEventDescrV4, proxyOp.pid, D4, proxyOp.pid);
SAME_FIELD(NcclEventDescrV4, proxyOp.channelId, D4, proxyOp.channelId);
SAME_FIELD(NcclEventDescrV4, proxyOp.peer, D4, proxyOp.peer);
SAME_FIELD(NcclEventDescrV4, proxyOp.nSteps, D4, proxyOp.nSteps);
SAME_FIELD(NcclEventDescrV4, proxyOp.chunkSize, D4, proxyOp.chunkSize);
SAME_FIELD(NcclEventDescrV4, proxyOp.isSend, D4, proxyOp.isSend);
SAME_PART(NcclEventDescrV4, proxyStep, D4, proxyStep);
SAME_FIELD(NcclEventDescrV4, proxyStep.step, D4, proxyStep.step);
SAME_PART(NcclEventDescrV4, kernelCh, D4, kernelCh);
SAME_FIELD(NcclEventDescrV4, kernelCh.channelId, D4, kernelCh.channelId);
SAME_FIELD(NcclEventDescrV4, kernelCh.pTimer, D4, kernelCh.pTimer);
SAME_PART(NcclEventDescrV4, netPlugin, D4, netPlugin);
SAME_FIELD(NcclEventDescrV4, netPlugin.id, D4, netPlugin.id);
SAME_FIELD(NcclEventDescrV4, netPlugin.data, D4, netPlugin.data);

using S4 = ncclProfilerEventStateArgs_v4_t;
SAME_LAYOUT(NcclEventStateArgs, S4);
SAME_FIELD(NcclEventStateArgs, proxyStep.transSize, S4, proxyStep.transSize);
SAME_FIELD(NcclEventStateArgs, proxyCtrl.appendedProxyOps, S4, proxyCtrl.appendedProxyOps);
SAME_FIELD(NcclEventStateArgs, netPlugin.data, S4, netPlugin.data);
SAME_FIELD(NcclEventStateArgs, kernelCh.pTimer, S4, kernelCh.pTimer);

using P4 = ncclProfiler_v4_t;
SAME_LAYOUT(NcclProfilerV4, P4);
SAME_FIELD(NcclProfilerV4, name, P4, name);
SAME_FUNCTION(NcclProfilerV4, P4, init);
SAME_FUNCTION(NcclProfilerV4, P4, startEvent);
SAME_FUNCTION(NcclProfilerV4, P4, stopEvent);
SAME_FUNCTION(NcclProfilerV4, P4, recordEventState);
SAME_FUNCTION(NcclProfilerV4, P4, finalize);

// --- version 5 (NCCL 2.28 and later) ---------------------------------------------------------
#if COMMPROF_CHECK_V5
SAME_VALUE(kNcclProfileGroupApi, ncclProfileGroupApi);
SAME_VALUE(kNcclProfileCollApi, ncclProfileCollApi);
SAME_VALUE(kNcclProfileP2pApi, ncclProfileP2pApi);
SAME_VALUE(kNcclProfileKernelLaunch, ncclProfileKernelLaunch);

using D5 = ncclProfilerEventDescr_v5_t;
SAME_LAYOUT(NcclEventDescrV5, D5);
SAME_FIELD(NcclEventDescrV5, type, D5, type);
SAME_FIELD(NcclEventDescrV5, parentObj, D5, parentObj);
SAME_FIELD(NcclEventDescrV5, rank, D5, rank);
SAME_PART(NcclEventDescrV5, groupApi, D5, groupApi);
SAME_FIELD(NcclEventDescrV5, groupApi.graphCaptured, D5, groupApi.graphCaptured);
SAME_FIELD(NcclEventDescrV5, groupApi.groupDepth, D5, groupApi.groupDepth);
SAME_PART(NcclEventDescrV5, collApi, D5, collApi);
SAME_FIELD(NcclEventDescrV5, collApi.func, D5, collApi.func);
SAME_FIELD(NcclEventDescrV5, collApi.count, D5, collApi.count);
SAME_FIELD(NcclEventDescrV5, collApi.datatype, D5, collApi.datatype);
SAME_FIELD(NcclEventDescrV5, collApi.root, D5, collApi.root);
SAME_FIELD(NcclEventDescrV5, collApi.stream, D5, collApi.stream);
SAME_FIELD(NcclEventDescrV5, collApi.graphCaptured, D5, collApi.graphCaptured);
SAME_PART(NcclEventDescrV5, p2pApi, D5, p2pApi);
SAME_FIELD(NcclEventDescrV5, p2pApi.func, D5, p2pApi.func);
SAME_FIELD(NcclEventDescrV5, p2pApi.count, D5, p2pApi.count);
SAME_FIELD(NcclEventDescrV5, p2pApi.datatype, D5, p2pApi.datatype);
SAME_FIELD(NcclEventDescrV5, p2pApi.stream, D5, p2pApi.stream);
SAME_FIELD(NcclEventDescrV5, p2pApi.graphCaptured, D5, p2pApi.graphCaptured);
SAME_PART(NcclEventDescrV5, kernelLaunch, D5, kernelLaunch);
SAME_FIELD(NcclEventDescrV5, kernelLaunch.stream, D5, kernelLaunch.stream);
// Ours nests v4's Coll and P2p fields (the same fields in the same order); NCCL's are flat.
SAME_PART(NcclEventDescrV5, coll, D5, coll);
SAME_FIELD(NcclEventDescrV5, coll.v4.seqNumber, D5, coll.seqNumber);
SAME_FIELD(NcclEventDescrV5, coll.v4.func, D5, coll.func);
SAME_FIELD(NcclEventDescrV5, coll.v4.sendBuff, D5, coll.sendBuff);
SAME_FIELD(NcclEventDescrV5, coll.v4.recvBuff, D5, coll.recvBuff);
SAME_FIELD(NcclEventDescrV5, coll.v4.count, D5, coll.count);
SAME_FIELD(NcclEventDescrV5, coll.v4.root, D5, coll.root);
SAME_FIELD(NcclEventDescrV5, coll.v4.datatype, D5, coll.datatype);
SAME_FIELD(NcclEventDescrV5, coll.v4.nChannels, D5, coll.nChannels);
SAME_FIELD(NcclEventDescrV5, coll.v4.nWarps, D5, coll.nWarps);
SAME_FIELD(NcclEventDescrV5, coll.v4.algo, D5, coll.algo);
SAME_FIELD(NcclEventDescrV5, coll.v4.proto, D5, coll.proto);
SAME_FIELD(NcclEventDescrV5, coll.parentGroup, D5, coll.parentGroup);
SAME_PART(NcclEventDescrV5, p2p, D5, p2p);
SAME_FIELD(NcclEventDescrV5, p2p.v4.func, D5, p2p.func);
SAME_FIELD(NcclEventDescrV5, p2p.v4.buff, D5, p2p.buff);
SAME_FIELD(NcclEventDescrV5, p2p.v4.datatype, D5, p2p.datatype);
SAME_FIELD(NcclEventDescrV5, p2p.v4.count, D5, p2p.count);
SAME_FIELD(NcclEventDescrV5, p2p.v4.peer, D5, p2p.peer);
SAME_FIELD(NcclEventDescrV5, p2p.v4.nChannels, D5, p2p.nChannels);
SAME_FIELD(NcclEventDescrV5, p2p.parentGroup, D5, p2p.parentGroup);
SAME_PART(NcclEventDescrV5, proxyOp, D5, proxyOp);
SAME_FIELD(NcclEventDescrV5, proxyOp.pid, D5, proxyOp.pid);
SAME_FIELD(NcclEventDescrV5, proxyOp.channelId, D5, proxyOp.channelId);
SAME_FIELD(NcclEventDescrV5, proxyOp.peer, D5, proxyOp.peer);
SAME_FIELD(NcclEventDescrV5, proxyOp.nSteps, D5, proxyOp.nSteps);
SAME_FIELD(NcclEventDescrV5, proxyOp.chunkSize, D5, proxyOp.chunkSize);
SAME_FIELD(NcclEventDescrV5, proxyOp.isSend, D5, proxyOp.isSend);
SAME_PART(NcclEventDescrV5, proxyStep, D5, proxyStep);
SAME_FIELD(NcclEventDescrV5, proxyStep.step, D5, proxyStep.step);
SAME_PART(NcclEventDescrV5, kernelCh, D5, kernelCh);
SAME_FIELD(NcclEventDescrV5, kernelCh.channelId, D5, kernelCh.channelId);
SAME_FIELD(NcclEventDescrV5, kernelCh.pTimer, D5, kernelCh.pTimer);
SAME_PART(NcclEventDescrV5, netPlugin, D5, netPlugin);
SAME_FIELD(NcclEventDescrV5, netPlugin.id, D5, netPlugin.id);
SAME_FIELD(NcclEventDescrV5, netPlugin.data, D5, netPlugin.data);

using S5 = ncclProfilerEventStateArgs_v5_t;
SAME_LAYOUT(NcclEventStateArgs, S5);
SAME_FIELD(NcclEventStateArgs, proxyStep.transSize, S5, proxyStep.transSize);
SAME_FIELD(NcclEventStateArgs, proxyCtrl.appendedProxyOps, S5, proxyCtrl.appendedProxyOps);
SAME_FIELD(NcclEventStateArgs, netPlugin.data, S5, netPlugin.data);
SAME_FIELD(NcclEventStateArgs, kernelCh.pTimer, S5, kernelCh.pTimer);

using P5 = ncclProfiler_v5_t;
SAME_LAYOUT(NcclProfilerV5, P5);
SAME_FIELD(NcclProfilerV5, name, P5, name);
SAME_FUNCTION(NcclProfilerV5, P5, init);
SAME_FUNCTION(NcclProfilerV5, P5, startEvent);
SAME_FUNCTION(NcclProfilerV5, P5, stopEvent);
SAME_FUNCTION(NcclProfilerV5, P5, recordEventState);
SAME_FUNCTION(NcclProfilerV5, P5, finalize);
#endif

int main() { return 0; }
