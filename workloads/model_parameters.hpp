// SPDX-License-Identifier: MIT
// The whole model's parameter count: dense layers (model_shape.hpp), MoE layers (moe.hpp) and the
// model's ends. Above both, so that the dense formulas need not know the MoE ones.
#pragma once

#include <cstdint>

#include "workloads/model_shape.hpp"

namespace commprof {

/// Every parameter of the model on one TP rank: each layer's tensors (layer_parameter_tensors, or
/// an MoE layer's with every expert over TP) and the ends. At tp 1 for llama-8b: 8,030,261,248,
/// Llama 3 8B's published count.
std::uint64_t model_parameters(const ModelShape& shape, int tp);

}  // namespace commprof
