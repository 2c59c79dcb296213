// SPDX-License-Identifier: MIT
#include "src/backend/cuda/cupti_activity.hpp"

#include <cupti.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "src/backend/cuda/dl_library.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {

/// CUPTI's entry points, resolved with dlopen: a missing libcupti must cost only this feature.
struct CuptiActivity::Library {
  void* handle = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiGetCallbackName) callback_name = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) register_timestamp = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityEnableDriverApi) enable_driver_api = nullptr;
  decltype(&cuptiActivityEnableRuntimeApi) enable_runtime_api = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped_records = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) push = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) pop = nullptr;

  // No dlclose: CUPTI keeps threads of its own that may outlive any object of ours, and
  // unmapping their code under them crashes the process at exit.

  std::string text(CUptiResult rc) const {
    const char* s = nullptr;
    if (result_string != nullptr && result_string(rc, &s) == CUPTI_SUCCESS && s != nullptr)
      return s;
    return "CUPTI error " + std::to_string(static_cast<int>(rc));
  }
};

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kBufferAlign = 8;

// The recorder CUPTI's callbacks deliver to. CUPTI calls back from threads of its own, so the
// pointer is read and cleared under a lock: a buffer is never parsed into a destroyed object.
std::mutex g_active_mutex;
CuptiActivity* g_active = nullptr;
bool g_loaded_by_us = false;  // libcupti stays loaded once we load it (see Library)

// CUPTI's timestamps on the host steady clock: kernel times then sit on the same clock as the
// epoch origin and the clock-offset estimates, with no second conversion.
uint64_t CUPTIAPI steady_now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer == nullptr ? 0 : kBufferBytes;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  {
    std::lock_guard<std::mutex> lock(g_active_mutex);
    if (g_active != nullptr) g_active->take_buffer(buffer, valid);
  }
  std::free(buffer);
}

// Another CUPTI client in the process (Nsight Systems, Nsight Compute, a framework profiler)
// owns the activity buffers: registering our callbacks would hand its buffers to us, and ours to
// it, and crash both. Tools inject themselves through these variables, before CUDA starts, so
// they are seen even before the tool has loaded CUPTI.
std::optional<std::string> injected_tool() {
  for (const char* var : {"CUDA_INJECTION64_PATH", "NSYS_PROFILING_SESSION_ID",
                          "NV_NSIGHT_INJECTION_TRANSPORT_TYPE"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0')
      return log::cat(var, " is set: a profiling tool (nsys, ncu) holds CUPTI");
  }
  return std::nullopt;
}

// A client that loaded CUPTI without injecting itself (checked once our own recorder is known
// not to be the one that loaded it).
std::optional<std::string> cupti_already_loaded() {
  if (g_loaded_by_us) return std::nullopt;
  for (const char* lib : {"libcupti.so.13", "libcupti.so"}) {
    if (void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(h);  // only drops the reference RTLD_NOLOAD took
      return std::string("libcupti is already loaded by another component of this process");
    }
  }
  return std::nullopt;
}

// The launch, async copy and memset entry points of the driver and runtime APIs: only calls
// that put work on a stream need an API record (and with it an external correlation record);
// recording every call, cudaStreamQuery polls included, would cost the host for nothing.
bool launches_work(const char* name) {
  const std::string n = name;
  const bool async = n.find("Async") != std::string::npos;
  return n.find("Launch") != std::string::npos ||
         (async &&
          (n.find("Memcpy") != std::string::npos || n.find("Memset") != std::string::npos));
}

std::unique_ptr<CuptiActivity::Library> load(std::string* why) {
  auto lib = std::make_unique<CuptiActivity::Library>();
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("COMMPROF_CUPTI_LIBRARY")) candidates.emplace_back(env);
  for (const char* c :
       {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
        "/usr/local/cuda/lib64/libcupti.so", "/usr/local/cuda/lib/libcupti.so"})
    candidates.emplace_back(c);
  lib->handle = dl::open_first(candidates);
  g_loaded_by_us = lib->handle != nullptr;
  if (lib->handle == nullptr) {
    *why = "libcupti.so could not be loaded (set COMMPROF_CUPTI_LIBRARY to its path)";
    return nullptr;
  }
  void* h = lib->handle;
  const bool ok =
      dl::resolve(h, "cuptiGetResultString", lib->result_string) &&
      dl::resolve(h, "cuptiGetCallbackName", lib->callback_name) &&
      dl::resolve(h, "cuptiActivityRegisterTimestampCallback", lib->register_timestamp) &&
      dl::resolve(h, "cuptiActivityRegisterCallbacks", lib->register_callbacks) &&
      dl::resolve(h, "cuptiActivityEnable", lib->enable) &&
      dl::resolve(h, "cuptiActivityDisable", lib->disable) &&
      dl::resolve(h, "cuptiActivityEnableDriverApi", lib->enable_driver_api) &&
      dl::resolve(h, "cuptiActivityEnableRuntimeApi", lib->enable_runtime_api) &&
      dl::resolve(h, "cuptiActivityFlushAll", lib->flush_all) &&
      dl::resolve(h, "cuptiActivityGetNextRecord", lib->next_record) &&
      dl::resolve(h, "cuptiActivityGetNumDroppedRecords", lib->dropped_records) &&
      dl::resolve(h, "cuptiActivityPushExternalCorrelationId", lib->push) &&
      dl::resolve(h, "cuptiActivityPopExternalCorrelationId", lib->pop);
  if (!ok) {
    *why = "the loaded libcupti lacks an entry point commprof needs (CUPTI 12.6 or newer)";
    return nullptr;
  }
  return lib;
}

constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                         CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

}  // namespace

std::unique_ptr<CuptiActivity> CuptiActivity::start(std::string* why) {
  if (const auto tool = injected_tool()) {
    *why = *tool;
    return nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(g_active_mutex);
    if (g_active != nullptr) {
      *why = "CUPTI activity recording is already running in this process";
      return nullptr;
    }
  }
  if (const auto other = cupti_already_loaded()) {
    *why = *other;
    return nullptr;
  }
  std::unique_ptr<Library> lib = load(why);
  if (!lib) return nullptr;
  // A tool that injected itself (nsys, ncu) owns CUPTI; our calls then fail here, and the caller
  // falls back to event timing instead of disturbing the tool's own trace.
  CUptiResult rc = lib->register_timestamp(&steady_now_ns);
  if (rc == CUPTI_SUCCESS) rc = lib->register_callbacks(&buffer_requested, &buffer_completed);
  if (rc != CUPTI_SUCCESS) {
    *why = "CUPTI is not available to commprof: " + lib->text(rc) +
           (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                ? " (another tool such as Nsight Systems holds it)"
                : "");
    return nullptr;
  }
  std::unique_ptr<CuptiActivity> self(new CuptiActivity(std::move(lib)));
  {
    std::lock_guard<std::mutex> lock(g_active_mutex);
    g_active = self.get();
  }
  const Library& L = *self->lib_;
  for (CUpti_ActivityKind kind : kKinds) {
    rc = L.enable(kind);
    if (rc != CUPTI_SUCCESS) {
      *why = log::cat("cuptiActivityEnable(", static_cast<int>(kind), ") failed: ", L.text(rc));
      return nullptr;  // the destructor disables what was enabled
    }
  }
  for (int cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (L.callback_name(CUPTI_CB_DOMAIN_DRIVER_API, static_cast<std::uint32_t>(cbid), &name) ==
            CUPTI_SUCCESS &&
        name != nullptr && launches_work(name)) {
      L.enable_driver_api(static_cast<CUpti_CallbackId>(cbid), 1);
      self->driver_cbids_.push_back(cbid);
    }
  }
  for (int cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (L.callback_name(CUPTI_CB_DOMAIN_RUNTIME_API, static_cast<std::uint32_t>(cbid), &name) ==
            CUPTI_SUCCESS &&
        name != nullptr && launches_work(name)) {
      L.enable_runtime_api(static_cast<CUpti_CallbackId>(cbid), 1);
      self->runtime_cbids_.push_back(cbid);
    }
  }
  return self;
}

CuptiActivity::CuptiActivity(std::unique_ptr<Library> lib) : lib_(std::move(lib)) {}

CuptiActivity::~CuptiActivity() {
  // Best effort: stop recording and hand back CUPTI's buffers before the library goes away.
  for (CUpti_ActivityKind kind : kKinds) lib_->disable(kind);
  lib_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(g_active_mutex);
  g_active = nullptr;
}

void CuptiActivity::push(std::uint64_t tag) {
  const CUptiResult rc = lib_->push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, tag);
  if (rc != CUPTI_SUCCESS)
    throw DeviceError(log::cat("cuptiActivityPushExternalCorrelationId failed on ", log::identity(),
                               ": ", lib_->text(rc)));
}

void CuptiActivity::pop() noexcept {
  std::uint64_t tag = 0;
  const CUptiResult rc = lib_->pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &tag);
  if (rc != CUPTI_SUCCESS) {
    try {
      log::warn(log::cat("cuptiActivityPopExternalCorrelationId failed: ", lib_->text(rc),
                         "; later op times may be attributed to the wrong op"));
    } catch (...) {
    }
  }
}

template <typename Record>
CuptiActivity::WorkRecord CuptiActivity::work_record(const void* record) {
  const auto* r = static_cast<const Record*>(record);
  return {r->correlationId, static_cast<std::int64_t>(r->start), static_cast<std::int64_t>(r->end)};
}

void CuptiActivity::take_buffer(std::uint8_t* buffer, std::size_t valid_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  CUpti_Activity* record = nullptr;
  while (lib_->next_record(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL:
        work_.push_back(work_record<CUpti_ActivityKernel10>(record));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        work_.push_back(work_record<CUpti_ActivityMemcpy6>(record));
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        work_.push_back(work_record<CUpti_ActivityMemset4>(record));
        break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
          tag_of_correlation_[x->correlationId] = x->externalId;
        break;
      }
      default:
        break;
    }
  }
  std::size_t dropped = 0;
  if (lib_->dropped_records(nullptr, 0, &dropped) == CUPTI_SUCCESS) dropped_ += dropped;
}

void CuptiActivity::collect(bool forced) {
  const CUptiResult rc = lib_->flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  if (rc != CUPTI_SUCCESS)
    throw DeviceError(
        log::cat("cuptiActivityFlushAll failed on ", log::identity(), ": ", lib_->text(rc)));
  std::lock_guard<std::mutex> lock(mutex_);
  if (dropped_ != 0)
    throw DeviceError(log::cat("CUPTI dropped ", dropped_, " activity records on ", log::identity(),
                               ": op times would be incomplete"));
  join_locked();
}

void CuptiActivity::join_locked() const {
  // Records whose launching call is not known yet stay for a later join; records of untagged
  // work (pattern fills, verification) never match and go at the next clear().
  std::size_t kept = 0;
  for (const WorkRecord& w : work_) {
    const auto tag = tag_of_correlation_.find(w.correlation);
    if (tag == tag_of_correlation_.end()) {
      work_[kept++] = w;
      continue;
    }
    auto [it, inserted] = spans_.try_emplace(tag->second, TaggedSpan{w.start_ns, w.end_ns});
    if (!inserted) {
      it->second.start_ns = std::min(it->second.start_ns, w.start_ns);
      it->second.end_ns = std::max(it->second.end_ns, w.end_ns);
    }
  }
  work_.resize(kept);
}

std::optional<TaggedSpan> CuptiActivity::span(std::uint64_t tag) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = spans_.find(tag);
  if (it == spans_.end()) return std::nullopt;
  return it->second;
}

void CuptiActivity::set_recording(bool on) {
  // The API records too: paused, no launch should pass through CUPTI at all.
  for (int cbid : driver_cbids_) lib_->enable_driver_api(static_cast<CUpti_CallbackId>(cbid), on);
  for (int cbid : runtime_cbids_) lib_->enable_runtime_api(static_cast<CUpti_CallbackId>(cbid), on);
  for (CUpti_ActivityKind kind : kKinds) {
    const CUptiResult rc = on ? lib_->enable(kind) : lib_->disable(kind);
    if (rc != CUPTI_SUCCESS)
      throw DeviceError(log::cat(on ? "cuptiActivityEnable" : "cuptiActivityDisable", "(",
                                 static_cast<int>(kind), ") failed on ", log::identity(), ": ",
                                 lib_->text(rc)));
  }
}

void CuptiActivity::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  work_.clear();
  tag_of_correlation_.clear();
  spans_.clear();
}

}  // namespace commprof
