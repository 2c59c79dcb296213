// SPDX-License-Identifier: MIT
#include "src/core/dtype.hpp"

#include "src/core/errors.hpp"

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

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "float";
    case DType::kFloat64:
      return "double";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kFloat16:
      return "half";
  }
  return "?";
}

DType parse_dtype(const std::string& text) {
  if (text == "float" || text == "float32" || text == "fp32" || text == "f32") {
    return DType::kFloat32;
  }
  if (text == "double" || text == "float64" || text == "fp64" || text == "f64") {
    return DType::kFloat64;
  }
  if (text == "int32" || text == "int") return DType::kInt32;
  if (text == "int64") return DType::kInt64;
  if (text == "bfloat16" || text == "bf16") return DType::kBFloat16;
  if (text == "half" || text == "float16" || text == "fp16" || text == "f16") {
    return DType::kFloat16;
  }
  throw ConfigError("invalid dtype '" + text +
                    "': expected float, double, int32, int64, bfloat16 or half");
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
