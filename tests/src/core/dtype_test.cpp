// SPDX-License-Identifier: MIT
#include "src/core/dtype.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "src/core/errors.hpp"
#include "support/collective_model.hpp"

namespace commprof {
namespace {

constexpr DType kAll[] = {DType::kFloat32, DType::kFloat64,  DType::kInt32,
                          DType::kInt64,   DType::kBFloat16, DType::kFloat16};

TEST(DType, SizesAndNcclTestsNames) {
  EXPECT_EQ(dtype_size(DType::kFloat32), 4u);
  EXPECT_EQ(dtype_size(DType::kFloat64), 8u);
  EXPECT_EQ(dtype_size(DType::kInt32), 4u);
  EXPECT_EQ(dtype_size(DType::kInt64), 8u);
  EXPECT_EQ(dtype_size(DType::kBFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_STREQ(dtype_name(DType::kFloat32), "float");
  EXPECT_STREQ(dtype_name(DType::kFloat64), "double");
  EXPECT_STREQ(dtype_name(DType::kInt32), "int32");
  EXPECT_STREQ(dtype_name(DType::kInt64), "int64");
  EXPECT_STREQ(dtype_name(DType::kBFloat16), "bfloat16");
  EXPECT_STREQ(dtype_name(DType::kFloat16), "half");
}

TEST(DType, EveryNameParsesBackToItsType) {
  for (DType t : kAll) EXPECT_EQ(parse_dtype(dtype_name(t)), t) << dtype_name(t);
}

TEST(DType, CommonAliases) {
  EXPECT_EQ(parse_dtype("fp32"), DType::kFloat32);
  EXPECT_EQ(parse_dtype("f32"), DType::kFloat32);
  EXPECT_EQ(parse_dtype("float32"), DType::kFloat32);
  EXPECT_EQ(parse_dtype("fp64"), DType::kFloat64);
  EXPECT_EQ(parse_dtype("bf16"), DType::kBFloat16);
  EXPECT_EQ(parse_dtype("fp16"), DType::kFloat16);
  EXPECT_EQ(parse_dtype("float16"), DType::kFloat16);
  EXPECT_EQ(parse_dtype("int"), DType::kInt32);
}

TEST(DType, UnknownNameIsAConfigErrorNamingIt) {
  for (const char* text : {"", "bf17", "FLOAT", "float ", "int8", "uint32"}) {
    try {
      parse_dtype(text);
      ADD_FAILURE() << "'" << text << "' was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + std::string(text) + "'"), std::string::npos)
          << e.what();
    }
  }
}

// Integer k is exact in a binary format with p significant bits iff rounding leaves it alone.
bool exact(std::uint64_t k, int bits) {
  const double x = static_cast<double>(k);
  return static_cast<std::uint64_t>(testing::round_to_bits(x, bits)) == k;
}

TEST(DType, MaxExactIntegerOfFloatingTypesIsTwoToTheSignificandBits) {
  for (DType t : {DType::kFloat32, DType::kBFloat16, DType::kFloat16}) {
    const int bits = testing::significand_bits(t);
    const std::uint64_t limit = dtype_max_exact_integer(t);
    EXPECT_EQ(limit, 1ull << bits) << dtype_name(t);
    EXPECT_TRUE(exact(limit, bits)) << dtype_name(t);
    EXPECT_FALSE(exact(limit + 1, bits)) << dtype_name(t) << ": the limit is not the largest";
    for (std::uint64_t k = 0; k <= std::min<std::uint64_t>(limit, 1u << 16); ++k) {
      ASSERT_TRUE(exact(k, bits)) << dtype_name(t) << " cannot hold " << k;
    }
  }
  // The native types agree with the model.
  const auto f = dtype_max_exact_integer(DType::kFloat32);
  EXPECT_EQ(static_cast<std::uint64_t>(static_cast<float>(f)), f);
  EXPECT_NE(static_cast<std::uint64_t>(static_cast<float>(f + 1)), f + 1);
  const auto d = dtype_max_exact_integer(DType::kFloat64);
  EXPECT_EQ(d, 1ull << 53);
  EXPECT_NE(static_cast<std::uint64_t>(static_cast<double>(d + 1)), d + 1);
}

TEST(DType, MaxExactIntegerOfIntegerTypesFits) {
  EXPECT_EQ(dtype_max_exact_integer(DType::kInt32),
            static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()));
  EXPECT_LE(dtype_max_exact_integer(DType::kInt64),
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  EXPECT_GE(dtype_max_exact_integer(DType::kInt64), 1ull << 53);
}

}  // namespace
}  // namespace commprof
