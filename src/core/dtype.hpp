// SPDX-License-Identifier: MIT
// Element types of collective and GEMM buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace commprof {

enum class DType : std::uint8_t { kFloat32, kFloat64, kInt32, kInt64, kBFloat16, kFloat16 };

std::size_t dtype_size(DType t);
/// nccl-tests' names: "float", "double", "int32", "int64", "bfloat16", "half".
const char* dtype_name(DType t);
/// Accepts the names above and common aliases (fp32, f32, bf16, fp16, ...); throws ConfigError.
DType parse_dtype(const std::string& text);
/// The largest integer N such that every integer in [0, N] is exact in this type: verification
/// patterns stay below it so that sums are exact in any reduction order.
std::uint64_t dtype_max_exact_integer(DType t);

}  // namespace commprof
