// SPDX-License-Identifier: MIT
#include "src/core/dtype.hpp"

#include "src/core/errors.hpp"
#include "src/core/name_table.hpp"

namespace commprof {

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32:
      return 4;
    case DType::kFloat64:
      return 8;
    case DType::kInt32:
      return 4;
    case DType::kInt64:
      return 8;
    case DType::kBFloat16:
      return 2;
    case DType::kFloat16:
      return 2;
  }
  return 0;
}

namespace {
// Canonical names first (printed, and listed in errors); then the spellings of PyTorch, NumPy
// and nccl-tests that are accepted too.
constexpr NamedValue<DType> kDTypeNames[] = {
    {DType::kFloat32, "float"},         {DType::kFloat64, "double"},
    {DType::kInt32, "int32"},           {DType::kInt64, "int64"},
    {DType::kBFloat16, "bfloat16"},     {DType::kFloat16, "half"},
    {DType::kFloat32, "float32", true}, {DType::kFloat32, "fp32", true},
    {DType::kFloat32, "f32", true},     {DType::kFloat64, "float64", true},
    {DType::kFloat64, "fp64", true},    {DType::kFloat64, "f64", true},
    {DType::kInt32, "int", true},       {DType::kBFloat16, "bf16", true},
    {DType::kFloat16, "float16", true}, {DType::kFloat16, "fp16", true},
    {DType::kFloat16, "f16", true}};
}  // namespace

const char* dtype_name(DType t) { return name_of(kDTypeNames, t); }

DType parse_dtype(const std::string& text) {
  return parse_name(kDTypeNames, text, "invalid dtype");
}

std::uint64_t dtype_max_exact_integer(DType t) {
  switch (t) {
    case DType::kFloat32:
      return 1ull << 24;
    case DType::kFloat64:
      return 1ull << 53;
    case DType::kInt32:
      return (1ull << 31) - 1;
    case DType::kInt64:
      return (1ull << 62);
    case DType::kBFloat16:
      return 256;
    case DType::kFloat16:
      return 2048;
  }
  return 0;
}

}  // namespace commprof
