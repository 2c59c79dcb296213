// SPDX-License-Identifier: MIT
#include <nvtx3/nvtx3.hpp>

#include <atomic>

#include "src/backend/annotation.hpp"

namespace commprof {
namespace {

struct commprof_domain {
  static constexpr char const* name{"commprof"};
};

// Category ids are fixed so that tools and our nsys importer can rely on them.
struct comp_category {
  static constexpr char const* name{"COMP"};
  static constexpr uint32_t id{1};
};
struct comm_category {
  static constexpr char const* name{"COMM"};
  static constexpr uint32_t id{2};
};
struct mem_category {
  static constexpr char const* name{"MEM"};
  static constexpr uint32_t id{3};
};

// Registered, not a plain string: nsys' --nvtx-capture by default compares only registered
// strings (NSYS_NVTX_PROFILER_REGISTER_ONLY=1), so this range starts a capture without any
// environment variable.
struct measured_steps_message {
  static constexpr char const* message{kMeasuredStepsRange};
};

std::atomic<bool> g_enabled{true};

nvtx3::category category_of(Category c) {
  using nvtx3::named_category_in;
  switch (c) {
    case Category::kComp:
      return named_category_in<commprof_domain>::get<comp_category>();
    case Category::kComm:
      return named_category_in<commprof_domain>::get<comm_category>();
    case Category::kMem:
      return named_category_in<commprof_domain>::get<mem_category>();
  }
  return nvtx3::category{0};
}

}  // namespace

namespace detail {

void nvtx_push(const std::string& text, std::optional<Category> category, std::int64_t payload,
               bool payload_is_sequence) {
  const nvtx3::color color{category ? category_color(*category) : 0xFF7F7F7Fu};
  // Bytes travel as uint64 (uint64Value in an nsys export), a sequence number as int64
  // (int64Value): the type says which it is.
  const nvtx3::payload value = payload_is_sequence
                                   ? nvtx3::payload{static_cast<std::int64_t>(payload)}
                                   : nvtx3::payload{static_cast<std::uint64_t>(payload)};
  const nvtx3::event_attributes attributes =
      category ? nvtx3::event_attributes{nvtx3::message{text}, color, category_of(*category), value}
               : nvtx3::event_attributes{nvtx3::message{text}, color, value};
  nvtxDomainRangePushEx(nvtx3::domain::get<commprof_domain>(), attributes.get());
}

void nvtx_push_measured_steps() {
  const nvtx3::event_attributes attributes{
      nvtx3::message{nvtx3::registered_string_in<commprof_domain>::get<measured_steps_message>()},
      nvtx3::color{0xFF7F7F7Fu}};
  nvtxDomainRangePushEx(nvtx3::domain::get<commprof_domain>(), attributes.get());
}

void nvtx_pop() { nvtxDomainRangePop(nvtx3::domain::get<commprof_domain>()); }

}  // namespace detail

void set_annotations_enabled(bool enabled) { g_enabled.store(enabled); }
bool annotations_enabled() { return g_enabled.load(std::memory_order_relaxed); }
bool annotations_compiled_in() { return true; }

}  // namespace commprof
