// SPDX-License-Identifier: MIT
// Where a mixture-of-experts router sends tokens: for a step, a layer and a source rank, how many
// of that rank's tokens × top-k go to each expert, and so to each expert-parallel rank. What
// `commprof bench --ops alltoallv` derives its counts from, and what an MoE workload will.
//
// Three distributions (`--routing`, docs/collectives.md):
//  - uniform: every expert the same share, the remainder spread over experts that rotate with
//    the source rank;
//  - zipf:S: expert popularity follows a Zipf law of exponent S, the popularity order permuted
//    per layer, each expert's weight moved per step and source rank by a log-normal factor;
//  - file:PATH: per-layer, per-expert token counts logged from a real run, scaled to the run's
//    tokens.
// Every count is a pure function of (distribution, step, layer, source rank): every rank
// computes every other rank's counts itself, and a run repeats exactly.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace commprof {

enum class RoutingKind : std::uint8_t { kUniform, kZipf, kFile };

/// The Zipf exponent of `--routing zipf`: over 64 experts, top-6, the per-expert loads it gives
/// have Gini 0.106 and max/mean 1.90 (Routing.DefaultZipfMatchesTheGiniOfRealText), matching the
/// Gini 0.105 that DODOCO (arXiv 2605.20982) measured on real text (wikitext) for
/// DeepSeek-MoE-16B, whose 64 routed experts and top-6 are the bench's default shape
/// (docs/collectives.md).
inline constexpr double kDefaultZipfExponent = 0.205;
/// σ of the log-normal factor that moves each expert's weight between steps (and source ranks):
/// a modelling choice, not a measured figure; it raises the Gini of one rank's counts a little.
inline constexpr double kZipfStepSigma = 0.1;

/// A parsed `--routing` value.
struct RoutingSpec {
  RoutingKind kind = RoutingKind::kZipf;
  double zipf_exponent = kDefaultZipfExponent;
  std::string path;  ///< kFile: the counts file

  /// "uniform", "zipf:0.26", "file:PATH": what reports print.
  std::string text() const;
};

/// Parses "uniform", "zipf" (the default exponent), "zipf:S" (S ≥ 0) or "file:PATH"; throws
/// ConfigError naming what is wrong.
RoutingSpec parse_routing(const std::string& text);

/// Per-layer, per-expert token counts logged from a real run: layers[l][e] tokens of layer l
/// went to expert e. The text format is in docs/collectives.md (an example:
/// tests/data/routing/example-8experts.txt).
struct RoutingTable {
  std::vector<std::vector<std::uint64_t>> layers;
  int experts() const { return layers.empty() ? 0 : static_cast<int>(layers.front().size()); }
};

/// Reads a table; `name` (the file's path) prefixes every error as name:line. Throws ConfigError.
RoutingTable parse_routing_table(std::istream& in, const std::string& name);
/// Opens and parses `path`; throws ConfigError when it cannot be read or is malformed.
RoutingTable read_routing_table(const std::string& path);

/// One routing distribution over `experts` experts. Immutable once built; copyable.
class Routing {
 public:
  /// Throws ConfigError when experts < 1, or a file cannot be read, is malformed or lists
  /// another number of experts.
  Routing(const RoutingSpec& spec, int experts);

  const RoutingSpec& spec() const { return spec_; }
  int experts() const { return experts_; }

  /// How many of `tokens` tokens of `source_rank`, each sent to `top_k` distinct experts, each
  /// expert receives at `step` and `layer`: the counts sum to tokens·top_k exactly and none
  /// exceeds `tokens` (a token picks an expert once). Throws ConfigError unless
  /// 1 ≤ top_k ≤ experts.
  std::vector<std::uint64_t> expert_counts(std::uint64_t tokens, int top_k, std::uint64_t step,
                                           int layer, int source_rank) const;

 private:
  std::vector<double> weights(std::uint64_t step, int layer, int source_rank) const;

  RoutingSpec spec_;
  int experts_ = 0;
  RoutingTable table_;  ///< kFile only
};

/// Tokens per expert-parallel rank: rank p holds experts [p·E/ep, (p+1)·E/ep), as Megatron
/// places them. Throws ConfigError when `ep` does not divide the number of experts.
std::vector<std::uint64_t> counts_per_rank(const std::vector<std::uint64_t>& expert_counts, int ep);

/// How unequal some loads are: the largest over the mean (1 when equal) and the Gini
/// coefficient (0 when equal, (n−1)/n when one takes all). Both 0 for no load.
struct LoadStats {
  double max_over_mean = 0.0;
  double gini = 0.0;
};
LoadStats load_stats(const std::vector<std::uint64_t>& loads);

}  // namespace commprof
