// SPDX-License-Identifier: MIT
#include "src/timeline/category.hpp"

namespace commprof {

const char* category_name(Category c) {
  switch (c) {
    case Category::kComp:
      return "COMP";
    case Category::kComm:
      return "COMM";
    case Category::kMem:
      return "MEM";
  }
  return "?";
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
