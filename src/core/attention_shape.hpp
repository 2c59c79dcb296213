// SPDX-License-Identifier: MIT
// The shape of a fused attention (AttentionCall, src/backend/work.hpp, says what it computes and
// in which layouts): plain numbers, so that a plan can hold one and count its FLOPs and bytes
// without the backend that will run it.
#pragma once

#include <cstdint>
#include <string>

namespace commprof {

/// `batch` × `heads` query heads of `head_dim` over `seq` queries and `kv_seq` keys (0: as many
/// as `seq`), `kv_heads` key/value heads (0: as many as `heads`), causal unless `causal` is
/// false; the forward, or the backward when `backward` is set.
struct AttentionShape {
  bool backward = false;
  int batch = 1;
  int heads = 1;
  int kv_heads = 0;
  int seq = 1;
  int kv_seq = 0;
  int head_dim = 1;
  bool causal = true;
  /// Key/value heads: kv_heads, or heads when it is 0.
  int key_value_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  /// Key/value tokens: kv_seq, or seq when it is 0.
  int key_value_seq() const { return kv_seq > 0 ? kv_seq : seq; }
  /// Why no backend can run this shape ("" when one can): query heads must split evenly over
  /// the key/value heads, and a causal block needs at least as many keys as queries. The one
  /// check every backend makes before running the call.
  std::string shape_problem() const {
    if (heads <= 0 || key_value_heads() <= 0 || heads % key_value_heads() != 0) {
      return std::to_string(heads) + " query heads are not a multiple of " +
             std::to_string(key_value_heads()) + " key/value heads";
    }
    if (causal && key_value_seq() < seq) {
      return "causal attention of " + std::to_string(seq) + " queries over " +
             std::to_string(key_value_seq()) + " keys leaves queries without keys";
    }
    return "";
  }
  /// Elements of one of O, dO, dQ.
  std::uint64_t elements() const { return rows_of(seq, heads); }
  /// Elements of one of K, V, dK, dV.
  std::uint64_t kv_elements() const { return rows_of(key_value_seq(), key_value_heads()); }
  /// Elements of the qkv buffer: max(seq, kv_seq) rows of every head (the layout above).
  std::uint64_t qkv_elements() const {
    return rows_of(seq > key_value_seq() ? seq : key_value_seq(), heads + 2 * key_value_heads());
  }
  /// Query-key pairs the kernel computes per batch and head: seq·kv_seq, under the causal mask
  /// seq·kv_seq − seq²/2 (bottom-right: the last seq × seq square halved, the columns before it
  /// whole; seq²/2 when the lengths are equal, as FlashAttention counts causal FLOPs).
  double pairs() const {
    const double q = seq, k = key_value_seq();
    return causal ? q * k - q * q / 2 : q * k;
  }
  /// The matrix FLOPs the kernel does: forward QKᵀ and PV, backward five products (the scores
  /// recomputed, dV, dP, dQ, dK), 2·pairs·head_dim each per query head (GQA shares K and V, not
  /// the products).
  double flops() const {
    const double per = 2.0 * batch * heads * pairs() * head_dim;
    return per * (backward ? 5 : 2);
  }

 private:
  std::uint64_t rows_of(int tokens, int n) const {
    return static_cast<std::uint64_t>(batch) * static_cast<std::uint64_t>(tokens) *
           static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(head_dim);
  }
};

}  // namespace commprof
