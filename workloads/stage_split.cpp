// SPDX-License-Identifier: MIT
#include "workloads/stage_split.hpp"

#include <numeric>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {

std::vector<int> virtual_stage_layers(int layers, int stages, int chunks,
                                      const StageSplitOptions& o) {
  const int virtual_stages = stages * chunks;
  const char* of_stages = chunks > 1 ? " x --virtual-stages " : "";
  if (!o.layers.empty()) {
    if (o.account_for_embedding || o.account_for_loss) {
      // As Megatron-Core: an explicit split already says where the ends' weight goes.
      throw ConfigError(
          "--pp-layers gives every stage's layers: it does not go with "
          "--account-for-embedding or --account-for-loss");
    }
    if (static_cast<int>(o.layers.size()) != virtual_stages) {
      throw ConfigError(log::cat("--pp-layers has ", o.layers.size(), " entries, but --pp ", stages,
                                 chunks > 1 ? log::cat(of_stages, chunks) : "", " makes ",
                                 virtual_stages, " stages"));
    }
    for (int n : o.layers) {
      if (n < 0) throw ConfigError(log::cat("--pp-layers: a stage of ", n, " layers"));
    }
    const int total = std::accumulate(o.layers.begin(), o.layers.end(), 0);
    if (total != layers) {
      throw ConfigError(
          log::cat("--pp-layers adds up to ", total, " layers, but the model has ", layers));
    }
    return o.layers;
  }
  const int emb = o.account_for_embedding ? 1 : 0;
  const int loss = o.account_for_loss ? 1 : 0;
  const int counted = layers + emb + loss;
  if (counted % virtual_stages != 0) {
    throw ConfigError(
        log::cat("--layers ", layers, emb != 0 ? " + 1 (--account-for-embedding)" : "",
                 loss != 0 ? " + 1 (--account-for-loss)" : "", " is not divisible by --pp ", stages,
                 chunks > 1 ? log::cat(of_stages, chunks) : ""));
  }
  std::vector<int> out(static_cast<std::size_t>(virtual_stages), counted / virtual_stages);
  out.front() -= emb;
  out.back() -= loss;
  if (out.front() < 0 || out.back() < 0) {
    throw ConfigError(log::cat("--layers ", layers,
                               " leaves no layer for the embedding or the "
                               "loss to stand in for on ",
                               virtual_stages, " stages"));
  }
  return out;
}

std::vector<ModelChunk> stage_chunks(int layers, int stages, int chunks, int stage, bool ends,
                                     const StageSplitOptions& o) {
  const std::vector<int> per = virtual_stage_layers(layers, stages, chunks, o);
  std::vector<ModelChunk> out;
  int first = 0;
  for (int v = 0; v < static_cast<int>(per.size()); ++v) {
    const int n = per[static_cast<std::size_t>(v)];
    if (v % stages == stage) {
      ModelChunk c;
      c.first_layer = first;
      c.layers = n;
      c.embedding = ends && v == 0;
      c.head = ends && v + 1 == static_cast<int>(per.size());
      out.push_back(c);
    }
    first += n;
  }
  return out;
}

std::vector<int> parse_layer_list(const std::string& text) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::size_t used = 0;
    int n = -1;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size()) {
      throw ConfigError("--pp-layers expects layer counts separated by commas (e.g. 3,5), not '" +
                        text + "'");
    }
    out.push_back(n);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace commprof
