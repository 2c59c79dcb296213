// SPDX-License-Identifier: MIT
#include "workloads/model_parameters.hpp"

#include <vector>

#include "workloads/moe.hpp"

namespace commprof {

std::uint64_t model_parameters(const ModelShape& s, int tp) {
  auto sum = [](const std::vector<std::uint64_t>& tensors) {
    std::uint64_t n = 0;
    for (std::uint64_t t : tensors) n += t;
    return n;
  };
  const std::uint64_t dense = sum(layer_parameter_tensors(s, tp));
  std::uint64_t moe = 0;
  if (s.moe()) {  // every expert, over TP as Megatron-Core's default expert TP
    moe = sum(moe_layer_dense_tensors(s, tp)) + sum(moe_layer_expert_tensors(s, 1, tp));
  }
  std::uint64_t total = 0;
  for (int l = 0; l < s.layers; ++l) total += s.moe_layer(l) ? moe : dense;
  const EndParameters ends = end_parameters(s, tp);
  return total + ends.embedding + ends.final_norm + ends.head;
}

}  // namespace commprof
