// SPDX-License-Identifier: MIT
// cuDNN's fused flash attention through its backend (graph) API, cuDNN 9 (cudnn_graph.h). The
// operation graphs are the ones cudnn-frontend (NVIDIA/cudnn-frontend, the composite forms of
// its sdpa and sdpa_backward nodes for bf16/fp16 training) hands cuDNN when PyTorch's
// scaled_dot_product_attention runs on its cuDNN backend on Hopper: the same graph makes cuDNN's
// engine heuristics pick the same fused kernels. Written here against the backend API directly:
// the frontend is a C++ header library we do not ship, and cuDNN itself is opened with dlopen.
//
// Forward:  S = Q·Kᵀ; S ·= scale; causal: S = (row + s_kv − s_q ≥ col) ? S : −∞ (bottom-right,
//           as the frontend's diagonal alignment BOTTOM_RIGHT; top-left and bottom-right are
//           the same when s_kv = s_q); M = max_row S;
//           E = exp(S − M); Z = Σ_row E; Stats = M + log Z; P = E / Z (bf16); O = P·V.
// Backward: D = Σ_row dO∘O (fp32 workspace); S = scale·Q·Kᵀ − Stats, masked; P = exp(S);
//           dV = Pᵀ·dO; dP = dO·Vᵀ; dS = scale·P∘(dP − D); dK = dSᵀ·Q; dQ = dS·K (fp32
//           accumulator in a workspace, then converted).
// Grouped-query attention as the frontend builds it: K and V have fewer heads, which the
// matmuls broadcast over their query heads; dK and dV are computed per query head (virtual
// tensors) and summed over each group by a reduction.
#include "src/backend/cuda/cudnn_attention.hpp"

#include <cudnn_graph.h>  // types and constants only: every function is resolved with dlsym

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include "src/backend/cuda/cuda_check.hpp"
#include "src/backend/cuda/dl_library.hpp"
#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {
namespace {

struct Api {
  void* lib = nullptr;
  std::size_t (*get_version)() = nullptr;
  cudnnStatus_t (*create)(cudnnHandle_t*) = nullptr;
  cudnnStatus_t (*destroy)(cudnnHandle_t) = nullptr;
  cudnnStatus_t (*set_stream)(cudnnHandle_t, cudaStream_t) = nullptr;
  const char* (*error_string)(cudnnStatus_t) = nullptr;
  void (*last_error)(char*, std::size_t) = nullptr;  // optional
  cudnnStatus_t (*create_desc)(cudnnBackendDescriptorType_t, cudnnBackendDescriptor_t*) = nullptr;
  cudnnStatus_t (*destroy_desc)(cudnnBackendDescriptor_t) = nullptr;
  cudnnStatus_t (*finalize)(cudnnBackendDescriptor_t) = nullptr;
  cudnnStatus_t (*set_attr)(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
                            cudnnBackendAttributeType_t, int64_t, const void*) = nullptr;
  cudnnStatus_t (*get_attr)(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
                            cudnnBackendAttributeType_t, int64_t, int64_t*, void*) = nullptr;
  cudnnStatus_t (*execute)(cudnnHandle_t, cudnnBackendDescriptor_t,
                           cudnnBackendDescriptor_t) = nullptr;
};

std::string status_text(const Api& api, cudnnStatus_t s) {
  std::string text = api.error_string != nullptr ? api.error_string(s) : "";
  if (api.last_error != nullptr) {
    char buf[1024] = {};
    api.last_error(buf, sizeof buf);
    if (buf[0] != '\0') text += std::string(": ") + buf;
  }
  return text;
}

void check(const Api& api, cudnnStatus_t s, const std::string& what) {
  if (s != CUDNN_STATUS_SUCCESS) throw DeviceError("cuDNN: " + what + ": " + status_text(api, s));
}

/// One backend descriptor, destroyed with its owner.
class Desc {
 public:
  Desc(const Api& api, cudnnBackendDescriptorType_t type) : api_(&api) {
    check(api, api.create_desc(type, &d_), "cannot create a backend descriptor");
  }
  ~Desc() {
    if (d_ != nullptr) api_->destroy_desc(d_);
  }
  Desc(Desc&& o) noexcept : api_(o.api_), d_(o.d_) { o.d_ = nullptr; }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  Desc& operator=(Desc&&) = delete;

  cudnnBackendDescriptor_t get() const { return d_; }
  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
            const void* value) {
    check(*api_, api_->set_attr(d_, name, type, count, value),
          log::cat("setting attribute ", static_cast<int>(name)));
    return *this;
  }
  Desc& set_i64(cudnnBackendAttributeName_t name, int64_t v) {
    return set(name, CUDNN_TYPE_INT64, 1, &v);
  }
  Desc& set_dtype(cudnnBackendAttributeName_t name, cudnnDataType_t v) {
    return set(name, CUDNN_TYPE_DATA_TYPE, 1, &v);
  }
  Desc& set_desc(cudnnBackendAttributeName_t name, const Desc& v) {
    cudnnBackendDescriptor_t raw = v.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
  }
  /// Finalizes; false (and the message) when cuDNN refuses, for the callers that try several.
  bool try_finalize(std::string* why = nullptr) {
    const cudnnStatus_t s = api_->finalize(d_);
    if (s != CUDNN_STATUS_SUCCESS && why != nullptr) *why = status_text(*api_, s);
    return s == CUDNN_STATUS_SUCCESS;
  }
  Desc& finalize(const std::string& what) {
    check(*api_, api_->finalize(d_), "cannot finalize " + what);
    return *this;
  }

 private:
  const Api* api_;
  cudnnBackendDescriptor_t d_ = nullptr;
};

using Dims = std::array<int64_t, 4>;

Dims packed(const Dims& d) {  // row-major strides of dims d
  return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
}

/// A graph under construction: tensors (virtual ones numbered from 1000) and operations.
class Graph {
 public:
  explicit Graph(const Api& api) : api_(api) {}

  const Desc& tensor(int64_t uid, cudnnDataType_t type, const Dims& dims, const Dims& strides,
                     bool is_virtual, bool by_value = false) {
    Desc& t = tensors_.emplace_back(api_, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    t.set_dtype(CUDNN_ATTR_TENSOR_DATA_TYPE, type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data())
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data())
        .set_i64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid)
        .set_i64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16);
    const bool v = is_virtual;
    t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v);
    if (by_value) {
      const bool b = true;
      t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &b);
    }
    t.finalize("a tensor descriptor");
    return t;
  }
  /// A scalar passed by value in the variant pack (fp32 unless `type` says otherwise).
  const Desc& scalar(int64_t uid, cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    return tensor(uid, type, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
  }
  const Desc& virt(cudnnDataType_t type, const Dims& dims) {
    return tensor(next_virtual_++, type, dims, packed(dims), true);
  }
  const Desc& virt(cudnnDataType_t type, const Dims& dims, const Dims& strides) {
    return tensor(next_virtual_++, type, dims, strides, true);
  }

  void pointwise(cudnnPointwiseMode_t mode, const Desc& x, const Desc* b, const Desc* t,
                 const Desc& y, cudnnDataType_t compute = CUDNN_DATA_FLOAT, int64_t axis = -1) {
    Desc& pw = descs_.emplace_back(api_, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
        .set_dtype(CUDNN_ATTR_POINTWISE_MATH_PREC, compute);
    if (axis >= 0) pw.set_i64(CUDNN_ATTR_POINTWISE_AXIS, axis);
    pw.finalize("a pointwise descriptor");
    Desc& op = ops_.emplace_back(api_, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b != nullptr) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t != nullptr) op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y).finalize("a pointwise operation");
  }
  void reduction(cudnnReduceTensorOp_t mode, const Desc& x, const Desc& y) {
    Desc& r = descs_.emplace_back(api_, CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    r.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode)
        .set_dtype(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT)
        .finalize("a reduction descriptor");
    Desc& op = ops_.emplace_back(api_, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
        .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, r)
        .finalize("a reduction operation");
  }
  void matmul(const Desc& a, const Desc& b, const Desc& c) {
    Desc& m = descs_.emplace_back(api_, CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    m.set_dtype(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT).finalize("a matmul descriptor");
    Desc& op = ops_.emplace_back(api_, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, m)
        .finalize("a matmul operation");
  }
  void reshape(const Desc& x, const Desc& y) {
    Desc& op = ops_.emplace_back(api_, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    op.set_desc(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x)
        .set_desc(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y)
        .finalize("a reshape operation");
  }

  /// The causal mask of scores `s`: (row ≥ col) ? s : −∞ (`neg_inf` a by-value scalar); with
  /// `offset` (an int32 by-value scalar, s_kv − s_q) aligned bottom-right: (row + offset ≥ col),
  /// the frontend's composite for that alignment.
  const Desc& causal_mask(const Desc& s, const Desc& neg_inf, const Dims& dims,
                          const Desc* offset = nullptr) {
    const Desc* row = &virt(CUDNN_DATA_INT32, dims);
    pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, *row, CUDNN_DATA_FLOAT, 2);
    if (offset != nullptr) {
      const Desc& shifted = virt(CUDNN_DATA_INT32, dims);
      pointwise(CUDNN_POINTWISE_ADD, *row, offset, nullptr, shifted, CUDNN_DATA_INT32);
      row = &shifted;
    }
    const Desc& col = virt(CUDNN_DATA_INT32, dims);
    pointwise(CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, col, CUDNN_DATA_FLOAT, 3);
    const Desc& keep = virt(CUDNN_DATA_BOOLEAN, dims);
    pointwise(CUDNN_POINTWISE_CMP_GE, *row, &col, nullptr, keep, CUDNN_DATA_BOOLEAN);
    const Desc& masked = virt(CUDNN_DATA_FLOAT, dims);
    pointwise(CUDNN_POINTWISE_BINARY_SELECT, s, &neg_inf, &keep, masked);
    return masked;
  }

  /// The operation graph, the heuristics' first engine configuration that cuDNN can build
  /// (what the frontend's default policy takes), and its workspace size.
  struct Plan {
    std::unique_ptr<Desc> graph, config, plan;
    int64_t workspace = 0;
  };
  Plan build(cudnnHandle_t handle, const std::string& what) {
    Plan p;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (const Desc& op : ops_) raw.push_back(op.get());
    p.graph = std::make_unique<Desc>(api_, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    p.graph
        ->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
              static_cast<int64_t>(raw.size()), raw.data())
        .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle)
        .finalize("the operation graph of " + what);
    Desc heur(api_, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, *p.graph)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode)
        .finalize("the engine heuristics of " + what);
    int64_t count = 0;
    check(api_,
          api_.get_attr(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                        &count, nullptr),
          "counting the engine configurations for " + what);
    std::vector<std::unique_ptr<Desc>> configs;
    std::vector<cudnnBackendDescriptor_t> raw_configs;
    for (int64_t i = 0; i < count; ++i) {
      configs.push_back(std::make_unique<Desc>(api_, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw_configs.push_back(configs.back()->get());
    }
    int64_t returned = 0;
    if (count > 0) {
      check(api_,
            api_.get_attr(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                          count, &returned, raw_configs.data()),
            "reading the engine configurations for " + what);
    }
    std::string why = "the heuristics returned no engine";
    for (int64_t i = 0; i < returned; ++i) {
      auto plan = std::make_unique<Desc>(api_, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle)
          .set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *configs[static_cast<std::size_t>(i)]);
      if (!plan->try_finalize(&why)) continue;
      int64_t n = 0;
      check(api_,
            api_.get_attr(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                          1, &n, &p.workspace),
            "reading the workspace size of " + what);
      p.config = std::move(configs[static_cast<std::size_t>(i)]);
      p.plan = std::move(plan);
      return p;
    }
    throw DeviceError(log::cat("cuDNN has no engine for ", what, " (", returned,
                               " configuration(s) tried; last: ", why, ")"));
  }

 private:
  const Api& api_;
  std::deque<Desc> tensors_;  // deques: references stay valid as they grow
  std::deque<Desc> descs_;
  std::deque<Desc> ops_;
  int64_t next_virtual_ = 1000;
};

cudnnDataType_t cudnn_type(DType t) {
  switch (t) {
    case DType::kBFloat16:
      return CUDNN_DATA_BFLOAT16;
    case DType::kFloat16:
      return CUDNN_DATA_HALF;
    default:
      throw ConfigError(log::cat("fused attention on cuda needs bf16 or fp16 (cuDNN's flash ",
                                 "attention), not ", dtype_name(t)));
  }
}

// The variant pack's unique ids.
enum Uid : int64_t {
  kQ = 1,
  kKt,
  kVt,  // V in the forward, Vᵀ in the backward
  kO,
  kStats,
  kScale,
  kNegInf,
  kDo,
  kOne,
  kRowSum,
  kDqAccum,
  kDq,
  kDk,
  kDv,
  kCausalOffset,  // s_kv − s_q (int32), where a causal block has more keys than queries
};

struct Built {
  Graph::Plan plan;
  void* row_sum = nullptr;   // backward: Σ dO∘O per row (fp32)
  void* dq_accum = nullptr;  // backward: dQ in fp32
};

class CudnnAttentionImpl final : public CudnnAttention {
 public:
  explicit CudnnAttentionImpl(Api api) : api_(api) {
    check(api_, api_.create(&handle_), "cannot create a handle");
  }
  ~CudnnAttentionImpl() override {
    built_.clear();
    for (void* p : allocations_) cudaFree(p);
    if (handle_ != nullptr) api_.destroy(handle_);
  }

  std::string version() const override {
    const std::size_t v = api_.get_version();
    return log::cat("cuDNN ", v / 10000, ".", v / 100 % 100, ".", v % 100);
  }

  void run(const AttentionCall& c, cudaStream_t stream) override {
    const auto key =
        std::make_tuple(c.backward, c.batch, c.heads, c.key_value_heads(), c.seq, c.key_value_seq(),
                        c.head_dim, c.causal, static_cast<int>(c.dtype));
    auto it = built_.find(key);
    if (it == built_.end()) it = built_.emplace(key, build(c)).first;
    Built& b = it->second;
    if (b.plan.workspace > workspace_bytes_) {
      if (workspace_ != nullptr) COMMPROF_CUDA_CHECK(cudaStreamSynchronize(stream));
      if (workspace_ != nullptr) COMMPROF_CUDA_CHECK(cudaFree(workspace_));
      workspace_ = nullptr;
      COMMPROF_CUDA_CHECK(cudaMalloc(&workspace_, static_cast<std::size_t>(b.plan.workspace)));
      workspace_bytes_ = b.plan.workspace;
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    const float neg_inf = -std::numeric_limits<float>::infinity();
    const float one = 1.0f;
    const std::int32_t causal_offset = c.key_value_seq() - c.seq;
    const std::size_t e = dtype_size(c.dtype);
    const auto d = static_cast<std::size_t>(c.head_dim);
    const auto h = static_cast<std::size_t>(c.heads);
    const auto kv = static_cast<std::size_t>(c.key_value_heads());
    const auto* qkv = static_cast<const char*>(c.qkv);
    void* q = const_cast<char*>(qkv);  // a token's query heads, then its key and value heads
    void* k = const_cast<char*>(qkv + h * d * e);
    void* v = const_cast<char*>(qkv + (h + kv) * d * e);
    std::vector<int64_t> uids;
    std::vector<void*> ptrs;
    auto bind = [&](int64_t uid, const void* p) {
      uids.push_back(uid);
      ptrs.push_back(const_cast<void*>(p));
    };
    bind(kQ, q);
    bind(kKt, k);
    bind(kVt, v);
    bind(kO, c.o);
    bind(kStats, c.stats);
    bind(kScale, &scale);
    if (c.causal) bind(kNegInf, &neg_inf);
    if (c.causal && causal_offset != 0) bind(kCausalOffset, &causal_offset);
    if (c.backward) {
      bind(kDo, c.d_o);
      bind(kOne, &one);
      bind(kRowSum, b.row_sum);
      bind(kDqAccum, b.dq_accum);
      bind(kDq, c.dq);
      bind(kDk, c.dk);
      bind(kDv, c.dv);
    }
    Desc pack(api_, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
             static_cast<int64_t>(uids.size()), uids.data())
        .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
             static_cast<int64_t>(ptrs.size()), ptrs.data())
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace_)
        .finalize("the variant pack");
    check(api_, api_.set_stream(handle_, stream), "cannot set the stream");
    check(api_, api_.execute(handle_, b.plan.plan->get(), pack.get()), "executing " + describe(c));
  }

 private:
  static std::string describe(const AttentionCall& c) {
    return log::cat(
        c.causal ? "causal " : "", "attention ", c.backward ? "backward" : "forward", " (batch ",
        c.batch, ", ", c.heads, " heads",
        c.key_value_heads() != c.heads
            ? log::cat(" sharing ", c.key_value_heads(), " key/value heads")
            : std::string(),
        ", seq ", c.seq,
        c.key_value_seq() != c.seq ? log::cat(", kv seq ", c.key_value_seq()) : std::string(),
        ", head dim ", c.head_dim, ", ", dtype_name(c.dtype), ")");
  }

  void* scratch(std::size_t bytes) {
    void* p = nullptr;
    COMMPROF_CUDA_CHECK(cudaMalloc(&p, bytes));
    allocations_.push_back(p);
    return p;
  }

  Built build(const AttentionCall& c) {
    const cudnnDataType_t io = cudnn_type(c.dtype);
    const int64_t b = c.batch, h = c.heads, kv = c.key_value_heads(), s = c.seq,
                  skv = c.key_value_seq(), d = c.head_dim;
    if (const std::string problem = c.shape_problem(); !problem.empty()) {
      throw ConfigError("attention: " + problem);
    }
    Graph g(api_);
    // Q, K and V inside the fused projection's output, [b][max(s, skv)][h + 2·kv][d], seen as
    // [b, h, s, d] (Q) and [b, kv, skv, d] (K, V).
    const int64_t width = (h + 2 * kv) * d;
    const Dims qkv_strides = {std::max(s, skv) * width, d, width, 1};
    const Dims bhsd = {b, h, s, d};
    const Dims kv_dims = {b, kv, skv, d};
    const Dims kv_transposed_dims = {b, kv, d, skv};
    const Dims transposed = {qkv_strides[0], qkv_strides[1], 1, qkv_strides[2]};
    const Dims bshd_strides = {s * h * d, d, h * d, 1};         // O, dO, dQ: [b][s][h][d]
    const Dims kv_grad_strides = {skv * kv * d, d, kv * d, 1};  // dK, dV: [b][skv][kv][d]
    const Dims scores = {b, h, s, skv};
    const Dims scores_transposed = {b, h, skv, s};
    const Dims scores_transposed_strides = {h * s * skv, s * skv, 1, skv};
    const Dims row = {b, h, s, 1};
    const Desc& q = g.tensor(kQ, io, bhsd, qkv_strides, false);
    const Desc& kt = g.tensor(kKt, io, kv_transposed_dims, transposed, false);
    const Desc& o = g.tensor(kO, io, bhsd, bshd_strides, false);
    const Desc& stats = g.tensor(kStats, CUDNN_DATA_FLOAT, row, packed(row), false);
    const Desc& scale = g.scalar(kScale);
    const Desc* neg_inf = c.causal ? &g.scalar(kNegInf) : nullptr;
    const Desc* offset =
        c.causal && skv != s ? &g.scalar(kCausalOffset, CUDNN_DATA_INT32) : nullptr;
    Built out;
    if (!c.backward) {
      const Desc& v = g.tensor(kVt, io, kv_dims, qkv_strides, false);
      const Desc& sc = g.virt(CUDNN_DATA_FLOAT, scores);
      g.matmul(q, kt, sc);
      const Desc* x = &g.virt(CUDNN_DATA_FLOAT, scores);
      g.pointwise(CUDNN_POINTWISE_MUL, sc, &scale, nullptr, *x);
      if (c.causal) x = &g.causal_mask(*x, *neg_inf, scores, offset);
      const Desc& max = g.virt(CUDNN_DATA_FLOAT, row);
      g.reduction(CUDNN_REDUCE_TENSOR_MAX, *x, max);
      const Desc& shifted = g.virt(CUDNN_DATA_FLOAT, scores);
      g.pointwise(CUDNN_POINTWISE_SUB, *x, &max, nullptr, shifted);
      const Desc& ex = g.virt(CUDNN_DATA_FLOAT, scores);
      g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, nullptr, ex);
      const Desc& sum = g.virt(CUDNN_DATA_FLOAT, row);
      g.reduction(CUDNN_REDUCE_TENSOR_ADD, ex, sum);
      const Desc& log_sum = g.virt(CUDNN_DATA_FLOAT, row);
      g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, nullptr, log_sum);
      g.pointwise(CUDNN_POINTWISE_ADD, max, &log_sum, nullptr, stats);
      const Desc& p = g.virt(io, scores);  // the second matmul takes P in the i/o type
      g.pointwise(CUDNN_POINTWISE_DIV, ex, &sum, nullptr, p);
      g.matmul(p, v, o);
    } else {
      const Desc& vt = g.tensor(kVt, io, kv_transposed_dims, transposed, false);
      const Desc& d_o = g.tensor(kDo, io, bhsd, bshd_strides, false);
      const Desc& one = g.scalar(kOne);
      const Desc& row_sum = g.tensor(kRowSum, CUDNN_DATA_FLOAT, row, packed(row), false);
      const Desc& dq_accum = g.tensor(kDqAccum, CUDNN_DATA_FLOAT, bhsd, packed(bhsd), false);
      const Desc& dq = g.tensor(kDq, io, bhsd, bshd_strides, false);
      const Desc& dk = g.tensor(kDk, io, kv_dims, kv_grad_strides, false);
      const Desc& dv = g.tensor(kDv, io, kv_dims, kv_grad_strides, false);
      // dK or dV: directly under MHA; per query head, then summed over each group, under GQA.
      auto kv_gradient = [&](const Desc& a, const Desc& x, const Desc& grad) {
        if (kv == h) return g.matmul(a, x, grad);
        const Desc& full = g.virt(io, {b, h, skv, d});
        g.matmul(a, x, full);
        g.reduction(CUDNN_REDUCE_TENSOR_ADD, full, grad);
      };
      // D = Σ_row dO∘O, the softmax backward's row term.
      const Desc& prod = g.virt(CUDNN_DATA_FLOAT, bhsd, {h * s * d, s * d, h * d, 1});
      g.pointwise(CUDNN_POINTWISE_MUL, d_o, &o, nullptr, prod);
      const Desc& dsum = g.virt(CUDNN_DATA_FLOAT, row);
      g.reduction(CUDNN_REDUCE_TENSOR_ADD, prod, dsum);
      g.pointwise(CUDNN_POINTWISE_MUL, dsum, &one, nullptr, row_sum);
      // P recomputed from the forward's statistics.
      const Desc& sc = g.virt(CUDNN_DATA_FLOAT, scores);
      g.matmul(q, kt, sc);
      const Desc& scaled = g.virt(CUDNN_DATA_FLOAT, scores);
      g.pointwise(CUDNN_POINTWISE_MUL, sc, &scale, nullptr, scaled);
      const Desc* x = &g.virt(CUDNN_DATA_FLOAT, scores);
      g.pointwise(CUDNN_POINTWISE_SUB, scaled, &stats, nullptr, *x);
      if (c.causal) x = &g.causal_mask(*x, *neg_inf, scores, offset);
      const Desc& p = g.virt(CUDNN_DATA_FLOAT, scores);
      g.pointwise(CUDNN_POINTWISE_EXP, *x, nullptr, nullptr, p);
      const Desc& pt = g.virt(io, scores_transposed, scores_transposed_strides);
      g.reshape(p, pt);
      kv_gradient(pt, d_o, dv);
      const Desc& dp = g.virt(CUDNN_DATA_FLOAT, scores);
      g.matmul(d_o, vt, dp);
      const Desc& centred = g.virt(CUDNN_DATA_FLOAT, scores);
      g.pointwise(CUDNN_POINTWISE_SUB, dp, &row_sum, nullptr, centred);
      const Desc& weighted = g.virt(CUDNN_DATA_FLOAT, scores);
      g.pointwise(CUDNN_POINTWISE_MUL, centred, &p, nullptr, weighted);
      const Desc& ds = g.virt(CUDNN_DATA_FLOAT, scores);
      g.pointwise(CUDNN_POINTWISE_MUL, weighted, &scale, nullptr, ds);
      const Desc& dst = g.virt(io, scores_transposed, scores_transposed_strides);
      g.reshape(ds, dst);
      kv_gradient(dst, q, dk);
      const Desc& k = g.virt(CUDNN_DATA_FLOAT, kv_dims, qkv_strides);
      g.reshape(kt, k);
      g.matmul(ds, k, dq_accum);
      g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_accum, nullptr, nullptr, dq);
      out.row_sum = scratch(static_cast<std::size_t>(b * h * s) * sizeof(float));
      out.dq_accum = scratch(static_cast<std::size_t>(b * h * s * d) * sizeof(float));
    }
    out.plan = g.build(handle_, describe(c));
    return out;
  }

  Api api_;
  cudnnHandle_t handle_ = nullptr;
  std::map<std::tuple<bool, int, int, int, int, int, int, bool, int>, Built> built_;
  std::vector<void*> allocations_;
  void* workspace_ = nullptr;
  int64_t workspace_bytes_ = 0;
};

}  // namespace

std::unique_ptr<CudnnAttention> CudnnAttention::open(std::string& why_not) {
  Api api;
  api.lib = dl::open_first({"libcudnn.so.9", "libcudnn.so"});
  if (api.lib == nullptr) {
    why_not =
        "libcudnn.so.9 not found (install cuDNN 9, or add its lib directory to "
        "LD_LIBRARY_PATH: PyTorch's wheels carry it in site-packages/nvidia/cudnn/lib)";
    return nullptr;
  }
  const bool ok = dl::resolve(api.lib, "cudnnGetVersion", api.get_version) &&
                  dl::resolve(api.lib, "cudnnCreate", api.create) &&
                  dl::resolve(api.lib, "cudnnDestroy", api.destroy) &&
                  dl::resolve(api.lib, "cudnnSetStream", api.set_stream) &&
                  dl::resolve(api.lib, "cudnnGetErrorString", api.error_string) &&
                  dl::resolve(api.lib, "cudnnBackendCreateDescriptor", api.create_desc) &&
                  dl::resolve(api.lib, "cudnnBackendDestroyDescriptor", api.destroy_desc) &&
                  dl::resolve(api.lib, "cudnnBackendFinalize", api.finalize) &&
                  dl::resolve(api.lib, "cudnnBackendSetAttribute", api.set_attr) &&
                  dl::resolve(api.lib, "cudnnBackendGetAttribute", api.get_attr) &&
                  dl::resolve(api.lib, "cudnnBackendExecute", api.execute);
  dl::resolve(api.lib, "cudnnGetLastErrorString", api.last_error);  // cuDNN 9; optional
  if (!ok) {
    why_not = "libcudnn.so.9 lacks the backend API";
    return nullptr;
  }
  if (api.get_version() < 90000) {
    why_not = log::cat("cuDNN ", api.get_version(), " is older than 9");
    return nullptr;
  }
  try {
    return std::make_unique<CudnnAttentionImpl>(api);
  } catch (const Error& e) {
    why_not = e.what();
    return nullptr;
  }
}

}  // namespace commprof
