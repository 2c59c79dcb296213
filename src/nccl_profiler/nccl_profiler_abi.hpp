// SPDX-License-Identifier: MIT
// NCCL's profiler plugin interface, versions 4 (NCCL 2.26-2.27) and 5 (NCCL 2.28+), declared
// here in our own words to match the published ABI exactly: NCCL's
// plugins/profiler/example/nccl/{profiler.h,profiler_v4.h,profiler_v5.h,common.h} (NCCL 2.28,
// unchanged in 2.30). Only layout matters: every struct below has the fields, types and order of
// NCCL's; union members commprof never reads are declared all the same, so that the union has its
// real size and alignment.
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

// The header, as NCCL lays it out: type, parent, rank, then the union at 24 (x86-64, aarch64).
static_assert(offsetof(NcclEventDescrV4, coll) == 24 && offsetof(NcclEventDescrV5, coll) == 24);
static_assert(offsetof(NcclCollFieldsV4, nChannels) == 56 &&
              offsetof(NcclCollFieldsV4, proto) == 72);
static_assert(sizeof(NcclCollFieldsV4) == 80 && offsetof(NcclP2pFieldsV4, nChannels) == 36);
static_assert(offsetof(NcclKernelChFields, pTimer) == 8);
