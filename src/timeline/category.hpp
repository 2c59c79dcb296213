// SPDX-License-Identifier: MIT
// The three kinds of GPU work commprof tells apart. Each has its own in-order stream, so the
// overlap between them is what the hardware gives, not what one queue serialises.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace commprof {

enum class Category : std::uint8_t { kComp = 0, kComm = 1, kMem = 2 };

inline constexpr std::array<Category, 3> kAllCategories = {Category::kComp, Category::kComm,
                                                           Category::kMem};

/// "COMP", "COMM", "MEM": the names nsys users see in NVTX categories and reports.
const char* category_name(Category c);

/// The inverse of category_name, for every reader of these names (rank files, NVTX category
/// names, classification rules); nullopt for any other text, which each reader words itself.
std::optional<Category> category_from_name(std::string_view name);

/// ARGB colours of the NVTX ranges: COMP green, COMM red, MEM blue (fixed so timelines of
/// different runs read the same).
std::uint32_t category_color(Category c);

inline std::size_t index_of(Category c) { return static_cast<std::size_t>(c); }

}  // namespace commprof
