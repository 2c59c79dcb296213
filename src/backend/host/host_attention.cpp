// SPDX-License-Identifier: MIT
#include "src/backend/host/host_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

// Element offsets in the layouts of AttentionCall: qkv [b][rows][h + 2·kv][d] (query heads,
// key heads, value heads; rows = max(s, skv)), O, dO, dQ [b][s][h][d], dK, dV [b][skv][kv][d].
// Query head `head` reads the key and value head head / (h / kv).
struct Layout {
  std::size_t s, skv, h, kv, d;
  std::size_t rows() const { return std::max(s, skv); }
  std::size_t group(std::size_t head) const { return head / (h / kv); }
  std::size_t q(std::size_t b, std::size_t t, std::size_t head) const {
    return (b * rows() + t) * (h + 2 * kv) * d + head * d;
  }
  std::size_t k(std::size_t b, std::size_t t, std::size_t head) const {
    return q(b, t, h + group(head));
  }
  std::size_t v(std::size_t b, std::size_t t, std::size_t head) const {
    return q(b, t, h + kv + group(head));
  }
  std::size_t row(std::size_t b, std::size_t t, std::size_t head) const {
    return (b * s + t) * h * d + head * d;
  }
  std::size_t kv_row(std::size_t b, std::size_t t, std::size_t kv_head) const {
    return (b * skv + t) * kv * d + kv_head * d;
  }
  // The last key query i attends to: causal is aligned bottom-right (shape_problem refused
  // skv < s), so query i sits at key position i + skv − s.
  std::size_t last_key(std::size_t i, bool causal) const { return causal ? i + skv - s : skv - 1; }
};

template <class T>
double dot(const T* a, const T* b, std::size_t n) {
  double x = 0;
  for (std::size_t i = 0; i < n; ++i) x += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return x;
}

template <class T>
void forward(const AttentionCall& c) {
  const auto B = static_cast<std::size_t>(c.batch), H = static_cast<std::size_t>(c.heads),
             S = static_cast<std::size_t>(c.seq), D = static_cast<std::size_t>(c.head_dim);
  const Layout L{S, static_cast<std::size_t>(c.key_value_seq()), H,
                 static_cast<std::size_t>(c.key_value_heads()), D};
  const auto* qkv = static_cast<const T*>(c.qkv);
  auto* o = static_cast<T*>(c.o);
  auto* stats = static_cast<float*>(c.stats);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  std::vector<double> x(L.skv), acc(D);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < H; ++h) {
      for (std::size_t i = 0; i < S; ++i) {
        const std::size_t last = L.last_key(i, c.causal);  // the keys row i attends to: 0..last
        double max = -std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j <= last; ++j) {
          x[j] = scale * dot(qkv + L.q(b, i, h), qkv + L.k(b, j, h), D);
          max = std::max(max, x[j]);
        }
        double sum = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (std::size_t j = 0; j <= last; ++j) {
          const double e = std::exp(x[j] - max);
          sum += e;
          const T* v = qkv + L.v(b, j, h);
          for (std::size_t k = 0; k < D; ++k) acc[k] += e * static_cast<double>(v[k]);
        }
        T* out = o + L.row(b, i, h);
        for (std::size_t k = 0; k < D; ++k) out[k] = static_cast<T>(acc[k] / sum);
        stats[(b * H + h) * S + i] = static_cast<float>(max + std::log(sum));
      }
    }
  }
}

template <class T>
void backward(const AttentionCall& c) {
  const auto B = static_cast<std::size_t>(c.batch), H = static_cast<std::size_t>(c.heads),
             S = static_cast<std::size_t>(c.seq), D = static_cast<std::size_t>(c.head_dim);
  const Layout L{S, static_cast<std::size_t>(c.key_value_seq()), H,
                 static_cast<std::size_t>(c.key_value_heads()), D};
  const auto* qkv = static_cast<const T*>(c.qkv);
  const auto* o = static_cast<const T*>(c.o);
  const auto* d_o = static_cast<const T*>(c.d_o);
  const auto* stats = static_cast<const float*>(c.stats);
  auto* dq = static_cast<T*>(c.dq);
  auto* dk = static_cast<T*>(c.dk);
  auto* dv = static_cast<T*>(c.dv);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  std::vector<double> gq(D), gk(L.skv * D), gv(L.skv * D);
  for (std::size_t b = 0; b < B; ++b) {
    // dK and dV of a key/value head sum over the query heads that share it.
    for (std::size_t g = 0; g < L.kv; ++g) {
      std::fill(gk.begin(), gk.end(), 0.0);
      std::fill(gv.begin(), gv.end(), 0.0);
      for (std::size_t h = g * (H / L.kv); h < (g + 1) * (H / L.kv); ++h) {
        for (std::size_t i = 0; i < S; ++i) {
          const T* q = qkv + L.q(b, i, h);
          const T* grad = d_o + L.row(b, i, h);
          const double row_term = dot(grad, o + L.row(b, i, h), D);  // Σ_k dO·O of row i
          const double lse = stats[(b * H + h) * S + i];
          std::fill(gq.begin(), gq.end(), 0.0);
          const std::size_t last = L.last_key(i, c.causal);
          for (std::size_t j = 0; j <= last; ++j) {
            const T* k = qkv + L.k(b, j, h);
            const T* v = qkv + L.v(b, j, h);
            const double p = std::exp(scale * dot(q, k, D) - lse);
            const double ds = p * (dot(grad, v, D) - row_term) * scale;
            for (std::size_t t = 0; t < D; ++t) {
              gv[j * D + t] += p * static_cast<double>(grad[t]);
              gq[t] += ds * static_cast<double>(k[t]);
              gk[j * D + t] += ds * static_cast<double>(q[t]);
            }
          }
          T* out = dq + L.row(b, i, h);
          for (std::size_t t = 0; t < D; ++t) out[t] = static_cast<T>(gq[t]);
        }
      }
      for (std::size_t j = 0; j < L.skv; ++j) {
        for (std::size_t t = 0; t < D; ++t) {
          dk[L.kv_row(b, j, g) + t] = static_cast<T>(gk[j * D + t]);
          dv[L.kv_row(b, j, g) + t] = static_cast<T>(gv[j * D + t]);
        }
      }
    }
  }
}

}  // namespace

void host_attention(const AttentionCall& call) {
  if (const std::string problem = call.shape_problem(); !problem.empty()) {
    throw ConfigError("attention: " + problem);
  }
  switch (call.dtype) {
    case DType::kFloat32:
      return call.backward ? backward<float>(call) : forward<float>(call);
    case DType::kFloat64:
      return call.backward ? backward<double>(call) : forward<double>(call);
    default:
      throw ConfigError(
          std::string("the host backend computes attention in float or double, not ") +
          dtype_name(call.dtype));
  }
}

}  // namespace commprof
