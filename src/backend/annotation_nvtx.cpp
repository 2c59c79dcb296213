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

ScopedAnnotation::ScopedAnnotation(const std::string& name, std::uint64_t bytes,
                                   std::optional<Category> category) {
  if (!g_enabled.load(std::memory_order_relaxed)) return;
  const nvtx3::color color{category ? category_color(*category) : 0xFF7F7F7Fu};
  const nvtx3::event_attributes attributes =
      category ? nvtx3::event_attributes{nvtx3::message{name}, color, category_of(*category),
                                         nvtx3::payload{static_cast<std::uint64_t>(bytes)}}
               : nvtx3::event_attributes{nvtx3::message{name}, color,
                                         nvtx3::payload{static_cast<std::uint64_t>(bytes)}};
  nvtxDomainRangePushEx(nvtx3::domain::get<commprof_domain>(), attributes.get());
  active_ = true;
}

ScopedAnnotation::~ScopedAnnotation() {
  if (active_) nvtxDomainRangePop(nvtx3::domain::get<commprof_domain>());
}

void set_annotations_enabled(bool enabled) { g_enabled.store(enabled); }
bool annotations_enabled() { return g_enabled.load(); }
bool annotations_compiled_in() { return true; }

}  // namespace commprof
