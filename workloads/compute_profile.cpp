// SPDX-License-Identifier: MIT
#include "workloads/compute_profile.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

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

bool is_gemm(const std::string& name) {
  return contains_any(name, {"gemm", "nvjet", "cutlass", "xmma"});
}
bool is_loss_backward(const std::string& name) {
  return contains_any(name, {"softmaxbackward", "nll_loss_backward", "cross_entropy_backward",
                             "log_softmax_backward"});
}
bool is_loss_forward(const std::string& name) {
  return !is_backward(name) &&
         contains_any(name, {"softmaxforward", "log_softmax", "nll_loss_forward", "cross_entropy"});
}
bool is_embedding_backward(const std::string& name) {
  return contains_any(name, {"embedding_backward", "embedding_dense", "sum_and_scatter",
                             "krn_partial", "partial_segment", "compute_grad_weight", "radixsort",
                             "elementwise_kernel_with_index"});
}
bool is_embedding_lookup(const std::string& name) {
  return !is_backward(name) && !is_embedding_backward(name) &&
         contains_any(name, {"gather", "index_select", "indexselect", "embedding"});
}

// The model's ends among ops already split into forward, backward and optimizer (the rules in
// compute_profile.hpp). The loss's kernels anchor the head: its forward GEMM is the last before
// the loss's forward, its two backward GEMMs the first after the loss's backward.
void mark_ends(const std::vector<const OpRecord*>& ops, std::vector<ComputePart>& part) {
  const std::size_t n = ops.size();
  auto name = [&](std::size_t i) -> const std::string& { return ops[i]->name; };
  auto optimizer = [&](std::size_t i) { return part[i] == ComputePart::kOptimizer; };
  for (std::size_t i = 0; i < n; ++i) {
    if (optimizer(i) || !is_loss_forward(name(i))) continue;
    if (i > 0 && part[i - 1] == ComputePart::kHeadForward) continue;  // the same loss
    std::size_t j = i;
    while (j > 0 && !optimizer(j - 1) && !is_gemm(name(j))) --j;
    if (is_gemm(name(j))) {
      for (std::size_t k = j; k < i; ++k) part[k] = ComputePart::kHeadForward;
    }
    for (std::size_t k = i;
         k < n && !optimizer(k) && !is_gemm(name(k)) && !is_loss_backward(name(k)); ++k) {
      part[k] = ComputePart::kHeadForward;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (optimizer(i) || !is_loss_backward(name(i))) continue;
    if (i > 0 && part[i - 1] == ComputePart::kHeadBackward) continue;
    int gemms = 0;
    for (std::size_t k = i; k < n && !optimizer(k) && gemms < 2; ++k) {
      if (is_gemm(name(k))) ++gemms;
      part[k] = ComputePart::kHeadBackward;
    }
  }
  bool gemm_seen = true;  // since the current forward pass began
  for (std::size_t i = 0; i < n; ++i) {
    if (part[i] != ComputePart::kForward) {
      gemm_seen = true;
      if (part[i] != ComputePart::kOptimizer && is_embedding_backward(name(i)))
        part[i] = ComputePart::kEmbeddingBackward;
      continue;
    }
    if (i == 0 || part[i - 1] != ComputePart::kForward) gemm_seen = false;
    if (is_embedding_backward(name(i))) {
      part[i] = ComputePart::kEmbeddingBackward;  // the previous micro-batch's, before this pass
      continue;
    }
    if (is_gemm(name(i))) gemm_seen = true;
    if (!gemm_seen && is_embedding_lookup(name(i))) part[i] = ComputePart::kEmbeddingForward;
  }
}

// Time of the step with no op of the trace running: its wall time less the union of its ops.
double idle_of(const StepRecord& step) {
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (const OpRecord& op : step.ops) spans.emplace_back(op.start_ns, op.end_ns);
  std::sort(spans.begin(), spans.end());
  std::int64_t covered = 0, reach = step.start_ns;
  for (const auto& [a, b] : spans) {
    const std::int64_t from = std::max(a, reach), to = std::min(b, step.end_ns);
    if (to > from) covered += to - from;
    reach = std::max(reach, to);
  }
  return static_cast<double>(std::max<std::int64_t>(0, step.end_ns - step.start_ns - covered));
}

// The step's gaps (ComputeProfile::gap_ns) by the part of the compute op after each: walking the
// compute and communication ops in start order, time that none of them covers goes to the part
// of the first compute op starting at or after the gap's end. `comp` are the step's COMP ops in
// start order, `parts` theirs.
std::array<double, 7> gaps_of(const StepRecord& step, const std::vector<const OpRecord*>& comp,
                              const std::vector<ComputePart>& parts) {
  std::array<double, 7> out{};
  auto add = [&](std::size_t op, std::int64_t ns) {
    out[static_cast<std::size_t>(parts[op < comp.size() ? op : 0])] += static_cast<double>(ns);
  };
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (const OpRecord& op : step.ops) {
    if (op.category != Category::kMem) spans.emplace_back(op.start_ns, op.end_ns);
  }
  std::sort(spans.begin(), spans.end());
  std::int64_t reach = step.start_ns;
  std::size_t next = 0;  // the first compute op not starting before the current span
  for (const auto& [a, b] : spans) {
    if (a >= step.end_ns) break;
    if (a > reach) {
      while (next < comp.size() && comp[next]->start_ns < a) ++next;
      add(next, a - reach);
    }
    reach = std::max(reach, b);
  }
  if (step.end_ns > reach) add(0, step.end_ns - reach);  // the next step's start waits for it
  return out;
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
  if (any_backward) mark_ends(comp_ops, part);
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
        switch (parts[i]) {
          case ComputePart::kOptimizer:
            p.optimizer_ns += ns;
            break;
          case ComputePart::kEmbeddingForward:
            p.ends.embedding_forward_ns += ns;
            break;
          case ComputePart::kEmbeddingBackward:
            p.ends.embedding_backward_ns += ns;
            break;
          case ComputePart::kHeadForward:
            p.ends.head_forward_ns += ns;
            break;
          case ComputePart::kHeadBackward:
            p.ends.head_backward_ns += ns;
            break;
          case ComputePart::kForward:
            (split ? p.forward_ns : unsplit_ns) += ns;
            break;
          case ComputePart::kBackward:
            (split ? p.backward_ns : unsplit_ns) += ns;
            break;
        }
      }
      p.idle_ns += idle_of(step);
      std::array<double, 7> gaps = gaps_of(step, comp, parts);
      if (!split) {  // as the time: forward and backward 1 : 2
        auto& fwd = gaps[static_cast<std::size_t>(ComputePart::kForward)];
        auto& bwd = gaps[static_cast<std::size_t>(ComputePart::kBackward)];
        const double both = fwd + bwd;
        fwd = both / 3;
        bwd = both * 2 / 3;
      }
      for (std::size_t g = 0; g < gaps.size(); ++g) p.gap_ns[g] += gaps[g];
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
  p.ends.embedding_forward_ns /= n;
  p.ends.embedding_backward_ns /= n;
  p.ends.head_forward_ns /= n;
  p.ends.head_backward_ns /= n;
  p.idle_ns /= n;
  for (double& g : p.gap_ns) g /= n;
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
  return log::cat(
      "compute from ", p.source, " (", p.samples, " steps): kernels ", ms(p.kernel_ns()),
      " ms per step = forward ", ms(p.forward_ns), " + backward ", ms(p.backward_ns),
      " + optimizer ", ms(p.optimizer_ns), "; ", p.micro_batches, " micro-batch(es) x ", p.layers,
      " layers: ", ms(p.layer_forward_ns()), " ms forward, ", ms(p.layer_backward_ns()),
      " ms backward per layer and micro-batch",
      p.split_by_names ? ""
                       : " (no backward kernel recognised by name: forward and "
                         "backward split 1 : 2)",
      p.has_ends()
          ? log::cat("; the model's ends ", ms(p.ends.total()), " ms per step: embedding ",
                     ms(p.ends.embedding_forward_ns), " + ", ms(p.ends.embedding_backward_ns),
                     ", LM head and loss ", ms(p.ends.head_forward_ns), " + ",
                     ms(p.ends.head_backward_ns), " (forward + backward)")
          : std::string("; no ends (embedding, LM head, loss) recognised"),
      "; idle in the traced step ", ms(p.idle_ns),
      " ms; gaps (no compute or communication op "
      "running) ",
      ms(p.gaps_total()), " ms: before forward ", ms(gap_of(p, ComputePart::kForward)),
      ", backward ", ms(gap_of(p, ComputePart::kBackward)), ", optimizer ",
      ms(gap_of(p, ComputePart::kOptimizer)), ", the ends ",
      ms(gap_of(p, ComputePart::kEmbeddingForward) + gap_of(p, ComputePart::kEmbeddingBackward) +
         gap_of(p, ComputePart::kHeadForward) + gap_of(p, ComputePart::kHeadBackward)));
}

}  // namespace commprof
