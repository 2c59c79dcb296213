// SPDX-License-Identifier: MIT
// NCCL's profiler plugin interface, versions 4 (NCCL 2.27) and 5 (NCCL 2.28+), declared
// here in our own words to match the published ABI exactly: the layouts NCCL itself is built
// with, src/include/plugin/profiler/profiler_v4.h (from NCCL 2.27.3) and profiler_v5.h (from
// 2.28.3), with the event types and states of src/include/plugin/nccl_profiler.h; checked
// against NCCL 2.27.7, 2.28.3 and 2.30.7. Only layout matters: every struct below has the fields,
// types and order of NCCL's; union members commprof never reads are declared all the same, so
// that the union has its real size and alignment. scripts/check-nccl-profiler-abi.sh compiles
// these declarations against an NCCL source tree's headers and compares every offset, size and
// signature; the asserts at the end hold the figures here, on every build.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

extern "C" {

// ncclResult_t is a C enum: an int. Profiler calls return 0 (ncclSuccess); init may return an
// error to make NCCL disable the plugin (3: ncclInternalError).
using NcclResult = int;
inline constexpr NcclResult kNcclSuccess = 0;
inline constexpr NcclResult kNcclInternalError = 3;

// The logger NCCL hands to init: (level, subsystem flags, file, line, printf format, ...).
using NcclDebugLogger = void (*)(int level, unsigned long flags, const char* file, int line,
                                 const char* fmt, ...);

// Event type bits (the descriptor's `type`, and init's activation mask).
enum : std::uint64_t {
  kNcclProfileGroup = 1u << 0,
  kNcclProfileColl = 1u << 1,
  kNcclProfileP2p = 1u << 2,
  kNcclProfileProxyOp = 1u << 3,
  kNcclProfileProxyStep = 1u << 4,
  kNcclProfileProxyCtrl = 1u << 5,
  kNcclProfileKernelCh = 1u << 6,
  kNcclProfileNetPlugin = 1u << 7,
  kNcclProfileGroupApi = 1u << 8,       // v5
  kNcclProfileCollApi = 1u << 9,        // v5
  kNcclProfileP2pApi = 1u << 10,        // v5
  kNcclProfileKernelLaunch = 1u << 11,  // v5
};

// The state recordEventState reports when a kernel channel's work ends (ncclProfilerKernelChStop).
inline constexpr int kNcclProfilerKernelChStop = 22;

struct NcclCollFieldsV4 {
  std::uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  std::size_t count;
  int root;
  const char* datatype;
  std::uint8_t nChannels;
  std::uint8_t nWarps;
  const char* algo;
  const char* proto;
};
struct NcclP2pFieldsV4 {
  const char* func;
  void* buff;
  const char* datatype;
  std::size_t count;
  int peer;
  std::uint8_t nChannels;
};
struct NcclProxyOpFields {
  pid_t pid;
  std::uint8_t channelId;
  int peer;
  int nSteps;
  int chunkSize;
  int isSend;
};
struct NcclKernelChFields {
  std::uint8_t channelId;
  std::uint64_t pTimer;  // the GPU's globaltimer (ns) when the channel's work started
};
struct NcclNetPluginFields {
  std::int64_t id;
  void* data;
};

struct NcclEventDescrV4 {
  std::uint8_t type;
  void* parentObj;
  int rank;
  union {
    NcclCollFieldsV4 coll;
    NcclP2pFieldsV4 p2p;
    NcclProxyOpFields proxyOp;
    struct {
      int step;
    } proxyStep;
    NcclKernelChFields kernelCh;
    NcclNetPluginFields netPlugin;
  };
};

struct NcclEventDescrV5 {
  std::uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      // bool in the header NCCL is built with (src/include/plugin/profiler/profiler_v5.h); the
      // example plugin's copy of 2.28 declared an int here (same offsets; commprof never reads it).
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      std::size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      std::size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      NcclCollFieldsV4 v4;  // the same fields in the same order, then one more
      void* parentGroup;
    } coll;
    struct {
      NcclP2pFieldsV4 v4;
      void* parentGroup;
    } p2p;
    NcclProxyOpFields proxyOp;
    struct {
      int step;
    } proxyStep;
    NcclKernelChFields kernelCh;
    NcclNetPluginFields netPlugin;
  };
};

// State arguments (v4 and v5 alike).
union NcclEventStateArgs {
  struct {
    std::size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    std::uint64_t pTimer;  // the GPU's globaltimer (ns) when the channel's work stopped
  } kernelCh;
};

struct NcclProfilerV4 {
  const char* name;
  NcclResult (*init)(void** context, int* eActivationMask, const char* commName,
                     std::uint64_t commHash, int nNodes, int nranks, int rank,
                     NcclDebugLogger logfn);
  NcclResult (*startEvent)(void* context, void** eHandle, NcclEventDescrV4* eDescr);
  NcclResult (*stopEvent)(void* eHandle);
  NcclResult (*recordEventState)(void* eHandle, int eState, NcclEventStateArgs* eStateArgs);
  NcclResult (*finalize)(void* context);
};

// v5 moved the communicator's id before the activation mask.
struct NcclProfilerV5 {
  const char* name;
  NcclResult (*init)(void** context, std::uint64_t commId, int* eActivationMask,
                     const char* commName, int nNodes, int nranks, int rank, NcclDebugLogger logfn);
  NcclResult (*startEvent)(void* context, void** eHandle, NcclEventDescrV5* eDescr);
  NcclResult (*stopEvent)(void* eHandle);
  NcclResult (*recordEventState)(void* eHandle, int eState, NcclEventStateArgs* eStateArgs);
  NcclResult (*finalize)(void* context);
};

}  // extern "C"

// The layout as NCCL's headers give it on LP64 targets (x86-64, aarch64): the header (type,
// parent, rank), then the union at 24. Every offset and size the plugin relies on, so that a
// field moved here by mistake fails the build; check-nccl-profiler-abi.sh derives the same figures
// from NCCL's own headers.
static_assert(offsetof(NcclCollFieldsV4, seqNumber) == 0 && offsetof(NcclCollFieldsV4, func) == 8 &&
              offsetof(NcclCollFieldsV4, sendBuff) == 16 &&
              offsetof(NcclCollFieldsV4, recvBuff) == 24 &&
              offsetof(NcclCollFieldsV4, count) == 32 && offsetof(NcclCollFieldsV4, root) == 40 &&
              offsetof(NcclCollFieldsV4, datatype) == 48 &&
              offsetof(NcclCollFieldsV4, nChannels) == 56 &&
              offsetof(NcclCollFieldsV4, nWarps) == 57 && offsetof(NcclCollFieldsV4, algo) == 64 &&
              offsetof(NcclCollFieldsV4, proto) == 72 && sizeof(NcclCollFieldsV4) == 80);
static_assert(offsetof(NcclP2pFieldsV4, func) == 0 && offsetof(NcclP2pFieldsV4, buff) == 8 &&
              offsetof(NcclP2pFieldsV4, datatype) == 16 && offsetof(NcclP2pFieldsV4, count) == 24 &&
              offsetof(NcclP2pFieldsV4, peer) == 32 && offsetof(NcclP2pFieldsV4, nChannels) == 36 &&
              sizeof(NcclP2pFieldsV4) == 40);
static_assert(offsetof(NcclProxyOpFields, pid) == 0 &&
              offsetof(NcclProxyOpFields, channelId) == 4 &&
              offsetof(NcclProxyOpFields, peer) == 8 && offsetof(NcclProxyOpFields, nSteps) == 12 &&
              offsetof(NcclProxyOpFields, chunkSize) == 16 &&
              offsetof(NcclProxyOpFields, isSend) == 20 && sizeof(NcclProxyOpFields) == 24);
static_assert(offsetof(NcclKernelChFields, channelId) == 0 &&
              offsetof(NcclKernelChFields, pTimer) == 8 && sizeof(NcclKernelChFields) == 16);
static_assert(offsetof(NcclNetPluginFields, id) == 0 && offsetof(NcclNetPluginFields, data) == 8 &&
              sizeof(NcclNetPluginFields) == 16);

// v4's descriptor: a one-byte type, the union after the rank.
static_assert(offsetof(NcclEventDescrV4, type) == 0 && sizeof(NcclEventDescrV4::type) == 1 &&
              offsetof(NcclEventDescrV4, parentObj) == 8 &&
              offsetof(NcclEventDescrV4, rank) == 16 && offsetof(NcclEventDescrV4, coll) == 24 &&
              offsetof(NcclEventDescrV4, p2p) == 24 && offsetof(NcclEventDescrV4, proxyOp) == 24 &&
              offsetof(NcclEventDescrV4, proxyStep) == 24 &&
              offsetof(NcclEventDescrV4, kernelCh) == 24 &&
              offsetof(NcclEventDescrV4, netPlugin) == 24 && sizeof(NcclEventDescrV4) == 104);

// v5's descriptor: an eight-byte type; the API events' members (the call's graph capture is what
// the plugin reads), then v4's Coll and P2p fields, each followed by its parent group.
static_assert(offsetof(NcclEventDescrV5, type) == 0 && sizeof(NcclEventDescrV5::type) == 8 &&
              offsetof(NcclEventDescrV5, parentObj) == 8 &&
              offsetof(NcclEventDescrV5, rank) == 16 && sizeof(NcclEventDescrV5) == 112);
static_assert(offsetof(NcclEventDescrV5, groupApi.graphCaptured) == 24 &&
              offsetof(NcclEventDescrV5, groupApi.groupDepth) == 28 &&
              sizeof(NcclEventDescrV5::groupApi) == 8);
static_assert(offsetof(NcclEventDescrV5, collApi.func) == 24 &&
              offsetof(NcclEventDescrV5, collApi.count) == 32 &&
              offsetof(NcclEventDescrV5, collApi.datatype) == 40 &&
              offsetof(NcclEventDescrV5, collApi.root) == 48 &&
              offsetof(NcclEventDescrV5, collApi.stream) == 56 &&
              offsetof(NcclEventDescrV5, collApi.graphCaptured) == 64 &&
              sizeof(NcclEventDescrV5::collApi) == 48);
static_assert(offsetof(NcclEventDescrV5, p2pApi.func) == 24 &&
              offsetof(NcclEventDescrV5, p2pApi.count) == 32 &&
              offsetof(NcclEventDescrV5, p2pApi.datatype) == 40 &&
              offsetof(NcclEventDescrV5, p2pApi.stream) == 48 &&
              offsetof(NcclEventDescrV5, p2pApi.graphCaptured) == 56 &&
              sizeof(NcclEventDescrV5::p2pApi) == 40);
static_assert(offsetof(NcclEventDescrV5, kernelLaunch.stream) == 24 &&
              sizeof(NcclEventDescrV5::kernelLaunch) == 8);
static_assert(offsetof(NcclEventDescrV5, coll.v4) == 24 &&
              offsetof(NcclEventDescrV5, coll.parentGroup) == 104 &&
              sizeof(NcclEventDescrV5::coll) == 88);
static_assert(offsetof(NcclEventDescrV5, p2p.v4) == 24 &&
              offsetof(NcclEventDescrV5, p2p.parentGroup) == 64 &&
              sizeof(NcclEventDescrV5::p2p) == 48);
static_assert(offsetof(NcclEventDescrV5, proxyOp) == 24 &&
              offsetof(NcclEventDescrV5, proxyStep) == 24 &&
              offsetof(NcclEventDescrV5, kernelCh) == 24 &&
              offsetof(NcclEventDescrV5, netPlugin) == 24);

// The state arguments (v4's and v5's unions are the same): eight bytes, every member at 0.
static_assert(sizeof(NcclEventStateArgs) == 8 &&
              offsetof(NcclEventStateArgs, proxyStep.transSize) == 0 &&
              offsetof(NcclEventStateArgs, proxyCtrl.appendedProxyOps) == 0 &&
              offsetof(NcclEventStateArgs, netPlugin.data) == 0 &&
              offsetof(NcclEventStateArgs, kernelCh.pTimer) == 0);

// The function tables NCCL looks up by name: the name, then init, startEvent, stopEvent,
// recordEventState and finalize, one pointer each.
static_assert(offsetof(NcclProfilerV4, name) == 0 && offsetof(NcclProfilerV4, init) == 8 &&
              offsetof(NcclProfilerV4, startEvent) == 16 &&
              offsetof(NcclProfilerV4, stopEvent) == 24 &&
              offsetof(NcclProfilerV4, recordEventState) == 32 &&
              offsetof(NcclProfilerV4, finalize) == 40 && sizeof(NcclProfilerV4) == 48);
static_assert(offsetof(NcclProfilerV5, name) == 0 && offsetof(NcclProfilerV5, init) == 8 &&
              offsetof(NcclProfilerV5, startEvent) == 16 &&
              offsetof(NcclProfilerV5, stopEvent) == 24 &&
              offsetof(NcclProfilerV5, recordEventState) == 32 &&
              offsetof(NcclProfilerV5, finalize) == 40 && sizeof(NcclProfilerV5) == 48);
