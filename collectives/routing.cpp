// SPDX-License-Identifier: MIT
#include "collectives/routing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "src/collective/pattern.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

// Seeds of the permutation and of the step factors: arbitrary constants, fixed so that a run
// repeats and every rank draws the same numbers.
constexpr std::uint64_t kPermutationSeed = 0x5a17e5b1e55ed0ddULL;
constexpr std::uint64_t kStepSeed = 0x0dd5eed5a1ad0b0bULL;

// Largest-remainder apportionment of `total` in proportion to `weights`, none above `cap`:
// shares that would pass the cap are fixed at it and the rest shared again among the others
// (water-filling), then each share is rounded down and the units left go to the largest
// fractions, ties to the entries first from `offset` on. Needs total ≤ cap·size.
std::vector<std::uint64_t> apportion(std::uint64_t total, const std::vector<double>& weights,
                                     std::uint64_t cap, std::size_t offset) {
  const std::size_t n = weights.size();
  std::vector<double> share(n, 0.0);
  std::vector<bool> capped(n, false);
  for (;;) {
    double left = static_cast<double>(total);
    double weight = 0.0;
    std::size_t open = 0;
    for (std::size_t e = 0; e < n; ++e) {
      if (capped[e]) {
        left -= static_cast<double>(cap);
      } else {
        weight += weights[e];
        ++open;
      }
    }
    bool capped_more = false;
    for (std::size_t e = 0; e < n; ++e) {
      if (capped[e]) continue;
      // No weight left among the open entries (a file's zero counts): share evenly.
      share[e] = weight > 0 ? left * weights[e] / weight : left / static_cast<double>(open);
      if (share[e] > static_cast<double>(cap)) {
        capped[e] = true;
        capped_more = true;
      }
    }
    if (!capped_more) break;
  }
  std::vector<std::uint64_t> counts(n, 0);
  std::uint64_t given = 0;
  for (std::size_t e = 0; e < n; ++e) {
    counts[e] = capped[e] ? cap : std::min(cap, static_cast<std::uint64_t>(std::floor(share[e])));
    given += counts[e];
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = (offset + i) % n;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return share[a] - std::floor(share[a]) > share[b] - std::floor(share[b]);
  });
  // Rounding down leaves fewer units than entries; the loop repeats only if floating-point
  // error left more, and ends because total ≤ cap·n.
  while (given < total) {
    for (std::size_t e : order) {
      if (given == total) break;
      if (counts[e] < cap) {
        ++counts[e];
        ++given;
      }
    }
  }
  return counts;
}

// Expert e's popularity rank in `layer` (0: the most popular): a Fisher-Yates shuffle driven by
// SplitMix64, the same on every rank and every build.
std::vector<std::size_t> popularity_rank(int experts, int layer) {
  std::vector<std::size_t> rank(static_cast<std::size_t>(experts));
  std::iota(rank.begin(), rank.end(), std::size_t{0});
  std::uint64_t state = mix64(kPermutationSeed ^ static_cast<std::uint64_t>(layer));
  for (std::size_t i = rank.size(); i > 1; --i) {
    state = mix64(state + 0x9e3779b97f4a7c15ULL);
    std::swap(rank[i - 1], rank[state % i]);
  }
  return rank;
}

bool parse_double(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(out);
}

}  // namespace

std::string RoutingSpec::text() const {
  switch (kind) {
    case RoutingKind::kUniform:
      return "uniform";
    case RoutingKind::kZipf: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "zipf:%g", zipf_exponent);
      return buf;
    }
    case RoutingKind::kFile:
      return "file:" + path;
  }
  return "?";
}

RoutingSpec parse_routing(const std::string& text) {
  RoutingSpec spec;
  if (text == "uniform") {
    spec.kind = RoutingKind::kUniform;
    return spec;
  }
  if (text == "zipf") return spec;
  if (text.rfind("zipf:", 0) == 0) {
    const std::string value = text.substr(5);
    if (!parse_double(value, spec.zipf_exponent) || spec.zipf_exponent < 0) {
      throw ConfigError("invalid --routing '" + text + "': the Zipf exponent '" + value +
                        "' is not a number >= 0");
    }
    return spec;
  }
  if (text.rfind("file:", 0) == 0) {
    spec.kind = RoutingKind::kFile;
    spec.path = text.substr(5);
    if (spec.path.empty()) throw ConfigError("invalid --routing 'file:': no file named");
    return spec;
  }
  throw ConfigError("unknown --routing '" + text +
                    "': expected uniform, zipf, zipf:S (S >= 0) or file:PATH");
}

Routing::Routing(const RoutingSpec& spec, int experts) : spec_(spec), experts_(experts) {
  if (experts < 1)
    throw ConfigError("a routing needs at least 1 expert, not " + std::to_string(experts));
  if (spec.kind == RoutingKind::kFile) {
    table_ = read_routing_table(spec.path);
    if (table_.experts() != experts) {
      throw ConfigError("routing file '" + spec.path + "' counts tokens of " +
                        std::to_string(table_.experts()) + " experts per layer, not of the " +
                        std::to_string(experts) + " experts asked for");
    }
  }
}

std::vector<double> Routing::weights(std::uint64_t step, int layer, int source_rank) const {
  const auto n = static_cast<std::size_t>(experts_);
  std::vector<double> w(n, 1.0);
  switch (spec_.kind) {
    case RoutingKind::kUniform:
      break;
    case RoutingKind::kZipf: {
      const std::vector<std::size_t> rank = popularity_rank(experts_, layer);
      const std::uint64_t seed =
          mix64(kStepSeed ^ mix64(step) ^ (static_cast<std::uint64_t>(layer) << 32));
      for (std::size_t e = 0; e < n; ++e) {
        const double popularity = std::pow(static_cast<double>(rank[e] + 1), -spec_.zipf_exponent);
        w[e] = popularity * std::exp(kZipfStepSigma * normal_value(source_rank, e, seed));
      }
      break;
    }
    case RoutingKind::kFile: {
      const auto& counts = table_.layers[static_cast<std::size_t>(layer) % table_.layers.size()];
      for (std::size_t e = 0; e < n; ++e) w[e] = static_cast<double>(counts[e]);
      break;
    }
  }
  return w;
}

std::vector<std::uint64_t> Routing::expert_counts(std::uint64_t tokens, int top_k,
                                                  std::uint64_t step, int layer,
                                                  int source_rank) const {
  if (top_k < 1 || top_k > experts_) {
    throw ConfigError("top-k " + std::to_string(top_k) + " must be between 1 and the " +
                      std::to_string(experts_) + " experts");
  }
  const std::uint64_t total = tokens * static_cast<std::uint64_t>(top_k);
  const auto n = static_cast<std::uint64_t>(experts_);
  // Remainders start at an expert that moves with the source rank by the remainder itself, so
  // over consecutive ranks every expert gets its extra token in turn.
  const std::size_t offset =
      static_cast<std::size_t>((static_cast<std::uint64_t>(source_rank) * (total % n) + step +
                                static_cast<unsigned>(layer)) %
                               n);
  if (spec_.kind == RoutingKind::kUniform) {
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(n), total / n);
    for (std::uint64_t i = 0; i < total % n; ++i) ++counts[(offset + i) % n];
    return counts;
  }
  return apportion(total, weights(step, layer, source_rank), tokens, offset);
}

std::vector<std::uint64_t> counts_per_rank(const std::vector<std::uint64_t>& expert_counts,
                                           int ep) {
  const std::size_t experts = expert_counts.size();
  if (ep < 1 || experts % static_cast<std::size_t>(ep) != 0) {
    throw ConfigError(std::to_string(experts) + " experts do not divide evenly among " +
                      std::to_string(ep) + " expert-parallel ranks");
  }
  const std::size_t per_rank = experts / static_cast<std::size_t>(ep);
  std::vector<std::uint64_t> out(static_cast<std::size_t>(ep), 0);
  for (std::size_t e = 0; e < experts; ++e) out[e / per_rank] += expert_counts[e];
  return out;
}

LoadStats load_stats(const std::vector<std::uint64_t>& loads) {
  LoadStats s;
  if (loads.empty()) return s;
  std::vector<double> x(loads.begin(), loads.end());
  std::sort(x.begin(), x.end());
  const double sum = std::accumulate(x.begin(), x.end(), 0.0);
  if (sum <= 0) return s;
  const auto n = static_cast<double>(x.size());
  s.max_over_mean = x.back() / (sum / n);
  // G = Σ_i (2i − n − 1)·x_(i) / (n·Σx), i = 1..n over the loads sorted ascending.
  double weighted = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    weighted += (2.0 * static_cast<double>(i + 1) - n - 1.0) * x[i];
  }
  s.gini = weighted / (n * sum);
  return s;
}

}  // namespace commprof
