// SPDX-License-Identifier: MIT
#include "workloads/compute_profile.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"

namespace commprof {
namespace {

bool contains_any(const std::string& name, std::initializer_list<const char*> needles) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return std::any_of(needles.begin(), needles.end(),
                     [&](const char* n) { return lower.find(n) != std::string::npos; });
}

bool is_optimizer(const std::string& name) {
  return contains_any(name, {"adam", "optimizer", "multi_tensor"});
}
bool is_backward(const std::string& name) {
  return contains_any(name, {"bwd", "backward", "bprop", "grad"});
}

std::string ms(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", ns / 1e6);
  return buf;
}

}  // namespace

std::vector<ComputePart> classify_compute(const std::vector<const OpRecord*>& comp_ops,
                                          int* forward_passes, bool* split_by_names) {
  std::vector<ComputePart> part(comp_ops.size(), ComputePart::kBackward);
  // Runs of unmarked ops, as [first, last) over the non-optimizer ops in order.
  std::vector<std::size_t> order;  // indices of non-optimizer ops
  for (std::size_t i = 0; i < comp_ops.size(); ++i) {
    if (is_optimizer(comp_ops[i]->name)) {
      part[i] = ComputePart::kOptimizer;
    } else {
      order.push_back(i);
    }
  }
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  bool any_backward = false;
  for (std::size_t j = 0; j < order.size();) {
    if (is_backward(comp_ops[order[j]]->name)) {
      any_backward = true;
      ++j;
      continue;
    }
    std::size_t end = j;
    while (end < order.size() && !is_backward(comp_ops[order[end]]->name)) ++end;
    runs.emplace_back(j, end);
    j = end;
  }
  *split_by_names = any_backward;
  std::size_t longest = 0;
  for (const auto& [a, b] : runs) longest = std::max(longest, b - a);
  *forward_passes = 0;
  for (const auto& [a, b] : runs) {
    if (any_backward && 2 * (b - a) < longest) continue;
    ++*forward_passes;
    for (std::size_t j = a; j < b; ++j) part[order[j]] = ComputePart::kForward;
  }
  return part;
}

ComputeProfile learn_compute_profile(const std::vector<RankTimeline>& ranks, int layers,
                                     const std::string& source) {
  if (layers < 1) throw ConfigError("--compute-from needs the traced model's layers (--layers)");
  ComputeProfile p;
  p.source = source;
  p.layers = layers;
  std::map<int, int> passes_seen;  // forward passes per step -> how many steps
  double unsplit_ns = 0;           // non-optimizer time of steps without recognised backward
  for (const RankTimeline& rank : ranks) {
    for (const StepRecord& step : rank.steps) {
      if (step.warmup) continue;
      std::vector<const OpRecord*> comp;
      for (const OpRecord& op : step.ops) {
        if (op.category == Category::kComp) comp.push_back(&op);
      }
      if (comp.empty()) continue;
      std::stable_sort(comp.begin(), comp.end(), [](const OpRecord* a, const OpRecord* b) {
        return a->start_ns < b->start_ns;
      });
      int passes = 0;
      bool split = true;
      const std::vector<ComputePart> parts = classify_compute(comp, &passes, &split);
      for (std::size_t i = 0; i < comp.size(); ++i) {
        const auto ns = static_cast<double>(comp[i]->duration_ns());
        if (parts[i] == ComputePart::kOptimizer) {
          p.optimizer_ns += ns;
        } else if (!split) {
          unsplit_ns += ns;
        } else if (parts[i] == ComputePart::kForward) {
          p.forward_ns += ns;
        } else {
          p.backward_ns += ns;
        }
      }
      if (!split) {
        p.split_by_names = false;
        passes = 1;
      }
      ++passes_seen[passes];
      ++p.samples;
    }
  }
  if (p.samples == 0) {
    throw ConfigError(log::cat("--compute-from ", source,
                               ": no measured step with COMP ops to learn from (import a trace "
                               "of the real step with commprof import-nsys)"));
  }
  // Steps without recognised backward kernels: a backward pass costs twice the forward.
  p.forward_ns += unsplit_ns / 3;
  p.backward_ns += unsplit_ns * 2 / 3;
  const double n = p.samples;
  p.forward_ns /= n;
  p.backward_ns /= n;
  p.optimizer_ns /= n;
  p.micro_batches = std::max_element(passes_seen.begin(), passes_seen.end(), [](auto a, auto b) {
                      return a.second < b.second;
                    })->first;
  if (p.micro_batches < 1) {
    throw ConfigError(log::cat("--compute-from ", source,
                               ": no forward pass found (every COMP op looks like backward or "
                               "optimizer work)"));
  }
  if (passes_seen.size() > 1) {
    log::warn(log::cat("--compute-from ", source, ": steps differ in forward passes found; using ",
                       p.micro_batches, ", the most common"));
  }
  return p;
}

std::string describe(const ComputeProfile& p) {
  return log::cat("compute from ", p.source, " (", p.samples, " steps): kernels ",
                  ms(p.kernel_ns()), " ms per step = forward ", ms(p.forward_ns), " + backward ",
                  ms(p.backward_ns), " + optimizer ", ms(p.optimizer_ns), "; ", p.micro_batches,
                  " micro-batch(es) x ", p.layers, " layers: ", ms(p.layer_forward_ns()),
                  " ms forward, ", ms(p.layer_backward_ns()),
                  " ms backward per layer and micro-batch",
                  p.split_by_names ? ""
                                   : " (no backward kernel recognised by name: forward and "
                                     "backward split 1 : 2)");
}

}  // namespace commprof
