// SPDX-License-Identifier: MIT
// libnccl-profiler-commprof.so: the two function tables NCCL looks for, ncclProfiler_v5 (NCCL
// 2.28+) and ncclProfiler_v4 (2.27), both driving the one Process of profiler_core. Nothing
// here may throw into NCCL or fail a training job: every call catches whatever its body throws
// (nothing may unwind through NCCL's frames, whatever its type) and returns success, except
// init, whose error makes NCCL run without the plugin.
#include "src/nccl_profiler/nccl_profiler_abi.hpp"
#include "src/nccl_profiler/profiler_core.hpp"

namespace commprof::nccl_profiler {
namespace {

// The events the plugin asks NCCL for: each collective and point-to-point call (Coll, P2p: what
// was called, on which communicator) and its kernel channels (KernelCh: the GPU's start and
// stop of the call's work on each channel, the times the rank file holds). None of the proxy's
// events (ProxyOp, ProxyStep, ProxyCtrl, NetPlugin), which come per channel and per network step.
// v5 also: the API calls' events, for one fact only: whether the call was captured into a graph.
// COMMPROF_PLUGIN_EVENTS=calls leaves out the kernel channels and =none everything (what NCCL's
// delivery of the events costs, measured by difference; nothing is recorded then).
// With COMMPROF_PLUGIN_SAMPLE=K only one call in K is timed: the others' Coll or P2p event gets
// a handle that says so, and their KernelCh events a null handle. That alone saves NCCL nothing
// (measured on 2 H200: +239% at 1 MiB sampled against +205% with every call timed): NCCL has
// already set up the channel events of a call appended with KernelCh in the mask. So on v5 the
// plugin also takes KernelCh out of the mask between due calls (Process::control_mask).
int activation(EventSet events, bool v5) {
  if (events == EventSet::kNone) return 0;
  std::uint64_t mask = kNcclProfileColl | kNcclProfileP2p;
  if (events == EventSet::kKernels) mask |= kNcclProfileKernelCh;
  if (v5) mask |= kNcclProfileCollApi | kNcclProfileP2pApi;
  return static_cast<int>(mask);
}

// The handle of a v5 Coll or P2p API event. NCCL names it again as the parent of the operation's
// Coll or P2p event, after it has stopped it, and for a graph-captured call at every replay of
// the graph, for as long as the graph lives. So the handle is not an object of the call (which
// would have to live that long) but one of two fixed addresses, which say what the operation
// needs of its call: captured or not.
char captured_call;
char uncaptured_call;
bool is_api_handle(const void* h) { return h == &captured_call || h == &uncaptured_call; }

NcclResult init_comm(void** context, int* mask, bool v5, const char* name, std::uint64_t hash,
                     int nnodes, int nranks, int rank) {
  try {
    CommInfo info;
    info.name = name != nullptr ? name : "";
    info.hash = hash;
    info.nnodes = nnodes;
    info.nranks = nranks;
    info.rank = rank;
    *context = process().init_comm(info);
    *mask = activation(process().events(), v5);
    process().control_mask(mask, *mask & ~static_cast<int>(kNcclProfileKernelCh));
    return kNcclSuccess;
  } catch (...) {
    return kNcclInternalError;
  }
}

std::string_view view(const char* s) {
  return s != nullptr ? std::string_view(s) : std::string_view();
}

OpInfo coll_info(const NcclCollFieldsV4& c) {
  OpInfo op;
  op.func = view(c.func);
  op.seq = c.seqNumber;
  op.count = c.count;
  op.datatype = view(c.datatype);
  op.root = c.root;
  op.channels = c.nChannels;
  op.algo = view(c.algo);
  op.proto = view(c.proto);
  op.send_buff = c.sendBuff;
  op.recv_buff = c.recvBuff;
  return op;
}

OpInfo p2p_info(const NcclP2pFieldsV4& p) {
  OpInfo op;
  op.p2p = true;
  op.func = view(p.func);
  op.count = p.count;
  op.datatype = view(p.datatype);
  op.peer = p.peer;
  op.channels = p.nChannels;
  return op;
}

// The common part of startEvent: `type` and the fields already read from the version's layout.
NcclResult start(void* context, void** handle, std::uint64_t type, void* parent, const OpInfo* op,
                 const NcclKernelChFields* channel) {
  *handle = nullptr;
  try {
    auto* comm = static_cast<Comm*>(context);
    if ((type == kNcclProfileColl || type == kNcclProfileP2p) && comm != nullptr) {
      *handle = comm->process->start_op(comm, *op);
    } else if (type == kNcclProfileKernelCh && comm != nullptr) {
      *handle = comm->process->start_channel(static_cast<Event*>(parent), channel->pTimer);
    }
  } catch (...) {
    *handle = nullptr;
  }
  return kNcclSuccess;
}

// NCCL's stop of an operation: enqueued. A kernel channel's stop needs nothing (its
// KernelChStop state came just before).
NcclResult stop_event(void* handle) {
  if (handle == nullptr || is_api_handle(handle) || is_channel(handle) ||
      handle == untimed_call()) {
    return kNcclSuccess;
  }
  try {
    auto* e = static_cast<Event*>(handle);
    e->comm->process->op_enqueued(e);
  } catch (...) {
  }
  return kNcclSuccess;
}

NcclResult record_state(void* handle, int state, NcclEventStateArgs* args) {
  if (handle == nullptr || args == nullptr || is_api_handle(handle) || !is_channel(handle) ||
      state != kNcclProfilerKernelChStop) {
    return kNcclSuccess;
  }
  try {
    process().channel_stopped(static_cast<Channel*>(handle), args->kernelCh.pTimer);
  } catch (...) {
  }
  return kNcclSuccess;
}

NcclResult finalize(void* context) {
  try {
    if (context != nullptr) process().finalize_comm(static_cast<Comm*>(context));
  } catch (...) {
  }
  return kNcclSuccess;
}

NcclResult init_v5(void** context, std::uint64_t comm_id, int* mask, const char* name, int nnodes,
                   int nranks, int rank, NcclDebugLogger) {
  return init_comm(context, mask, true, name, comm_id, nnodes, nranks, rank);
}
NcclResult init_v4(void** context, int* mask, const char* name, std::uint64_t hash, int nnodes,
                   int nranks, int rank, NcclDebugLogger) {
  return init_comm(context, mask, false, name, hash, nnodes, nranks, rank);
}

NcclResult start_v5(void* context, void** handle, NcclEventDescrV5* d) {
  if (d->type == kNcclProfileGroupApi) {  // NCCL has just read the mask for the calls appended
    *handle = nullptr;
    try {
      process().group_appended();
    } catch (...) {
    }
    return kNcclSuccess;
  }
  if (d->type == kNcclProfileCollApi || d->type == kNcclProfileP2pApi) {
    const bool captured =
        d->type == kNcclProfileCollApi ? d->collApi.graphCaptured : d->p2pApi.graphCaptured;
    *handle = captured ? &captured_call : &uncaptured_call;
    return kNcclSuccess;
  }
  OpInfo op;
  if (d->type == kNcclProfileColl) op = coll_info(d->coll.v4);
  if (d->type == kNcclProfileP2p) op = p2p_info(d->p2p.v4);
  // Without API events (or on v4) the parent is null or a group: not captured, as far as known.
  op.graph_captured = d->parentObj == &captured_call;
  return start(context, handle, d->type, d->parentObj, &op, &d->kernelCh);
}
NcclResult start_v4(void* context, void** handle, NcclEventDescrV4* d) {
  OpInfo op;
  if (d->type == kNcclProfileColl) op = coll_info(d->coll);
  if (d->type == kNcclProfileP2p) op = p2p_info(d->p2p);
  return start(context, handle, d->type, d->parentObj, &op, &d->kernelCh);
}

}  // namespace
}  // namespace commprof::nccl_profiler

extern "C" {
__attribute__((visibility("default")))
NcclProfilerV5 ncclProfiler_v5 = {"commprof",
                                  commprof::nccl_profiler::init_v5,
                                  commprof::nccl_profiler::start_v5,
                                  commprof::nccl_profiler::stop_event,
                                  commprof::nccl_profiler::record_state,
                                  commprof::nccl_profiler::finalize};
__attribute__((visibility("default")))
NcclProfilerV4 ncclProfiler_v4 = {"commprof",
                                  commprof::nccl_profiler::init_v4,
                                  commprof::nccl_profiler::start_v4,
                                  commprof::nccl_profiler::stop_event,
                                  commprof::nccl_profiler::record_state,
                                  commprof::nccl_profiler::finalize};
}
