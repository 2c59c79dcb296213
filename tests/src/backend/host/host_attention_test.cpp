// SPDX-License-Identifier: MIT
// The host backend's attention on blocks with fewer queries than keys (context parallelism's):
// causal aligned bottom-right must give what the whole sequence's causal attention gives its
// last queries, and the block's FLOPs count the pairs it computes.
#include "src/backend/host/host_attention.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

constexpr int kHeads = 2, kKvHeads = 1, kDim = 4, kWidth = (kHeads + 2 * kKvHeads) * kDim;

// A value per (token, slot) of the qkv layout, not periodic, so a shifted row would show.
double value(int token, int slot) { return std::sin(0.37 * token + 0.11 * slot + 0.05); }

TEST(HostAttention, CausalBlockWithMoreKeysIsTheSequencesLastQueries) {
  const int keys = 6, queries = 2;
  // The whole sequence: 6 tokens, causal.
  std::vector<double> qkv(keys * kWidth), o(keys * kHeads * kDim);
  for (int t = 0; t < keys; ++t)
    for (int x = 0; x < kWidth; ++x) qkv[t * kWidth + x] = value(t, x);
  AttentionCall full;
  full.heads = kHeads;
  full.kv_heads = kKvHeads;
  full.seq = keys;
  full.head_dim = kDim;
  full.dtype = DType::kFloat64;
  full.qkv = qkv.data();
  full.o = o.data();
  std::vector<float> full_stats(kHeads * keys);
  full.stats = full_stats.data();
  host_attention(full);

  // The block: the last 2 queries (rows 0 and 1 of the buffer) against all 6 keys.
  std::vector<double> block_qkv = qkv;
  for (int t = 0; t < queries; ++t)
    for (int x = 0; x < kHeads * kDim; ++x)
      block_qkv[t * kWidth + x] = value(keys - queries + t, x);
  std::vector<double> block_o(queries * kHeads * kDim);
  std::vector<float> block_stats(kHeads * queries);
  AttentionCall block = full;
  block.seq = queries;
  block.kv_seq = keys;
  block.qkv = block_qkv.data();
  block.o = block_o.data();
  block.stats = block_stats.data();
  host_attention(block);
  for (int t = 0; t < queries; ++t) {
    for (int x = 0; x < kHeads * kDim; ++x) {
      EXPECT_NEAR(block_o[t * kHeads * kDim + x], o[(keys - queries + t) * kHeads * kDim + x],
                  1e-12)
          << "query " << t << ", element " << x;
    }
  }
}

TEST(HostAttention, BlockFlopsCountTheComputedPairs) {
  AttentionCall a;
  a.heads = 1;
  a.head_dim = 1;
  a.seq = 2;
  a.kv_seq = 6;
  // Bottom-right causal, 2 queries over 6 keys: query 0 sees 5 keys, query 1 all 6: 11 pairs,
  // counted as 2·6 − 2²/2 = 10 (the diagonal square halved, as FlashAttention counts).
  EXPECT_DOUBLE_EQ(a.pairs(), 10.0);
  EXPECT_DOUBLE_EQ(a.flops(), 2 * 2 * 10.0);
  a.causal = false;
  EXPECT_DOUBLE_EQ(a.pairs(), 12.0);
  a.backward = true;
  EXPECT_DOUBLE_EQ(a.flops(), 5 * 2 * 12.0);
}

TEST(HostAttention, CausalWithFewerKeysThanQueriesIsRefused) {
  AttentionCall a;
  a.seq = 4;
  a.kv_seq = 2;
  a.dtype = DType::kFloat64;
  EXPECT_THROW(host_attention(a), ConfigError);
  a.causal = false;
  EXPECT_EQ(a.shape_problem(), "");
}

}  // namespace
}  // namespace commprof
