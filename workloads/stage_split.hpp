// SPDX-License-Identifier: MIT
// Which transformer layers each pipeline stage (and each of its model chunks, with interleaving)
// holds, and where the model's ends lie, as Megatron-Core's get_num_layers_to_build splits them
// (megatron/core/transformer/transformer_block.py): evenly by default, the embedding and the loss
// optionally counted as a layer each (--account-for-embedding, --account-for-loss), or a list
// given layer by layer (--pp-layers).
#pragma once

#include <string>
#include <vector>

namespace commprof {

struct StageSplitOptions {
  /// Layers of each virtual stage (p entries, or p·V with interleaving, in virtual-stage order:
  /// chunk c of stage r is virtual stage c·p + r); empty: the even split.
  std::vector<int> layers;
  bool account_for_embedding = false;  ///< the embedding counts as a layer of the first stage
  bool account_for_loss = false;       ///< the LM head and loss count as one of the last stage
};

/// One model chunk of a pipeline stage: its layers (contiguous), and whether the model's ends
/// lie there (the embedding in the first virtual stage, the final norm, LM head and loss in the
/// last; only for a model that has them).
struct ModelChunk {
  int first_layer = 0;
  int layers = 0;
  bool embedding = false;
  bool head = false;
};

/// Layers of every virtual stage: `stages` × `chunks` entries. Throws ConfigError naming the
/// numbers when they do not divide, do not add up to `layers`, or leave a stage a negative count.
std::vector<int> virtual_stage_layers(int layers, int stages, int chunks,
                                      const StageSplitOptions& options);

/// The chunks of pipeline stage `stage`, in chunk order; `ends`: the model has an embedding and
/// an LM head (ModelShape::vocab > 0).
std::vector<ModelChunk> stage_chunks(int layers, int stages, int chunks, int stage, bool ends,
                                     const StageSplitOptions& options);

/// "--pp-layers 3,5" parsed: layer counts separated by commas; throws ConfigError otherwise.
std::vector<int> parse_layer_list(const std::string& text);

}  // namespace commprof
