// SPDX-License-Identifier: MIT
#include "src/timeline/category.hpp"

#include "src/core/name_table.hpp"

namespace commprof {

namespace {
constexpr NamedValue<Category> kCategoryNames[] = {
    {Category::kComp, "COMP"}, {Category::kComm, "COMM"}, {Category::kMem, "MEM"}};
}  // namespace

const char* category_name(Category c) { return name_of(kCategoryNames, c); }

std::optional<Category> category_from_name(std::string_view name) {
  for (const NamedValue<Category>& entry : kCategoryNames) {
    if (name == entry.name) return entry.value;
  }
  return std::nullopt;
}

std::uint32_t category_color(Category c) {
  switch (c) {
    case Category::kComp:
      return 0xFF2E9E44;  // green
    case Category::kComm:
      return 0xFFD62728;  // red
    case Category::kMem:
      return 0xFF1F77B4;  // blue
  }
  return 0xFF808080;
}

}  // namespace commprof
