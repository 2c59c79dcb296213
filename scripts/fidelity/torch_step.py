#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The reference of commprof's fidelity benchmark: a real training step of a preset's shapes in
PyTorch, on one GPU, timed and its kernels classified.

    python3 scripts/fidelity/torch_step.py --preset gpt-1.3b [--layers N] --out torch.json
    python3 scripts/fidelity/torch_step.py --gemm 8192 --out gemm.json

The model is what commprof's presets describe (workloads/model_shape.cpp), built from PyTorch's
own modules: `layers` pre-norm decoder layers (LayerNorm, causal attention through
F.scaled_dot_product_attention, GELU MLP for the GPT presets; RMSNorm, grouped-query attention
(32 query heads sharing 8 key/value heads, SDPA's enable_gqa) and a SwiGLU MLP without biases
for the llama presets), bf16 weights, `micro_batches` micro-batches of `micro_batch` x `seq`
tokens accumulated, then a fused AdamW step. With the model's ends (the presets' vocabulary, or
--vocab V; --vocab 0 leaves them out, as commprof's --vocab 0 does): an nn.Embedding of V rows
(V padded to a multiple of 128, as Megatron pads it and commprof's mock does) before the layers,
the final norm, a bias-free LM head (tied to the embedding for the GPT presets and llama-1b) and
F.cross_entropy over the fp32 logits after them; without ends the loss is the mean square of the
last layer's output. The MoE presets (mixtral-8x7b, deepseek-v3-gqa) replace the MLP of
their MoE layers by an MoE layer at expert parallelism 1 (class MoE: router, top-k, the counts
read on the host, permutation, the experts as torch._grouped_mm where this PyTorch has it on a
Hopper GPU, else one matmul each, unpermutation, shared experts).

Step time: CUDA events around whole steps (`--steps` after `--warmup`), mean and spread; each
timed step is also an NVTX range "step N" for traces taken with nsys. Kernel
time: one further step under torch.profiler, its kernels summed by class (GEMM: the linear layers;
attention: flash attention and cuDNN's helpers for it; optimizer; other: element-wise ops,
reductions and copies: norms, activations, residual adds, bias gradients, layout copies, gradient
accumulation) from the trace's own kernel records. The trace is kept (--trace) as evidence.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kernel_classes import kernel_class  # noqa: E402 (beside this file)
import torch
import torch.nn as nn
import torch.nn.functional as F

# commprof's presets (workloads/model_shape.cpp): layers, hidden, heads, key/value heads, ffn,
# gated, seq, b, m, vocabulary, tied embeddings.
PRESETS = {
    "gpt-1.3b": dict(layers=24, hidden=2048, heads=16, kv=16, ffn=8192, gated=False, seq=2048,
                     mb=1, m=4, vocab=50257, tied=True),
    "gpt-7b": dict(layers=32, hidden=4096, heads=32, kv=32, ffn=16384, gated=False, seq=2048,
                   mb=1, m=4, vocab=50257, tied=True),
    "llama-1b": dict(layers=16, hidden=2048, heads=32, kv=8, ffn=8192, gated=True, seq=4096,
                     mb=1, m=4, vocab=128256, tied=True),
    "llama-8b": dict(layers=32, hidden=4096, heads=32, kv=8, ffn=14336, gated=True, seq=8192,
                     mb=1, m=4, vocab=128256, tied=False),
    # Mixtures of experts (commprof's --experts, --top-k, --moe-ffn, --shared-experts,
    # --dense-layers): every layer from dense_layers on is an MoE layer.
    "mixtral-8x7b": dict(layers=32, hidden=4096, heads=32, kv=8, ffn=14336, gated=True, seq=4096,
                         mb=1, m=4, vocab=32000, tied=False, experts=8, top_k=2, moe_ffn=14336,
                         shared=0, dense_layers=0),
    "deepseek-v3-gqa": dict(layers=61, hidden=7168, heads=128, kv=8, ffn=18432, gated=True,
                            seq=4096, mb=1, m=4, vocab=129280, tied=False, experts=256, top_k=8,
                            moe_ffn=2048, shared=1, dense_layers=3),
}


def padded(vocab):
    """Megatron-LM's make_vocab_size_divisible_by (128) at one TP rank, as commprof pads it."""
    return (vocab + 127) // 128 * 128


class Attention(nn.Module):
    """One fused QKV projection: a token's query heads, then its key heads, then its value heads
    (commprof's AttentionCall layout); K and V have `kv` heads, each shared by heads/kv queries."""

    def __init__(self, h, heads, kv, bias):
        super().__init__()
        self.heads, self.kv, self.d = heads, kv, h // heads
        self.qkv = nn.Linear(h, (heads + 2 * kv) * self.d, bias=bias)
        self.out = nn.Linear(h, h, bias=bias)

    def forward(self, x):
        # The head counts are this rank's: a tensor-parallel rank (torch_dist_step.py --mode tp)
        # holds heads / tp query and kv / tp key/value heads of the projection's output.
        b, s, _ = x.shape
        qkv = self.qkv(x).view(b, s, self.heads + 2 * self.kv, self.d).transpose(1, 2)
        q, k, v = qkv.split([self.heads, self.kv, self.kv], dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           enable_gqa=self.kv != self.heads)
        return self.out(y.transpose(1, 2).reshape(b, s, self.heads * self.d))


class Mlp(nn.Module):
    def __init__(self, h, ffn, gated):
        super().__init__()
        self.gated = gated
        self.up = nn.Linear(h, 2 * ffn if gated else ffn, bias=not gated)
        self.down = nn.Linear(ffn, h, bias=not gated)

    def forward(self, x):
        if self.gated:
            gate, up = self.up(x).chunk(2, dim=-1)
            return self.down(F.silu(gate) * up)
        return self.down(F.gelu(self.up(x), approximate="tanh"))


def grouped_mm_available():
    """torch._grouped_mm (bf16, Hopper): one kernel for every expert's GEMM, as Megatron-Core's
    GroupedMLP runs them; where this PyTorch lacks it, one matmul per expert."""
    return hasattr(torch, "_grouped_mm") and torch.cuda.get_device_capability() >= (9, 0)


class MoE(nn.Module):
    """An MoE layer on one GPU (expert parallelism 1), as Megatron-Core's MoELayer computes it:
    the router (a bias-free linear layer, fp32 softmax, top-k), the per-expert counts read on the
    host (its alltoall dispatcher sizes the exchange there: a synchronisation), the tokens
    permuted into expert order, each expert's SwiGLU FFN on its rows, the rows weighted by their
    probabilities and summed back per token; shared experts (a dense FFN) beside them."""

    def __init__(self, p):
        super().__init__()
        h, f, e = p["hidden"], p["moe_ffn"], p["experts"]
        self.k, self.experts = p["top_k"], e
        self.router = nn.Linear(h, e, bias=False)
        self.up = nn.Parameter(torch.randn(e, h, 2 * f) * h ** -0.5)
        self.down = nn.Parameter(torch.randn(e, f, h) * f ** -0.5)
        self.shared = Mlp(h, p["shared"] * f, True) if p["shared"] else None
        self.grouped = grouped_mm_available()

    def experts_ffn(self, rows, counts):
        if self.grouped:
            try:
                offs = torch.cumsum(counts, 0, dtype=torch.int32)
                gate, up = torch._grouped_mm(rows, self.up, offs=offs).chunk(2, dim=-1)
                return torch._grouped_mm(F.silu(gate) * up, self.down, offs=offs)
            except RuntimeError as e:  # this build's grouped GEMM refuses these operands
                print(f"torch_step: torch._grouped_mm failed ({e}); one matmul per expert",
                      file=sys.stderr)
                self.grouped = False
        out, start = [], 0
        for e, c in enumerate(counts.tolist()):
            if c:
                gate, up = (rows[start:start + c] @ self.up[e]).chunk(2, dim=-1)
                out.append((F.silu(gate) * up) @ self.down[e])
                start += c
        return torch.cat(out)

    def forward(self, x):
        b, s, h = x.shape
        t = x.reshape(-1, h)
        probs, idx = self.router(t).float().softmax(-1).topk(self.k, dim=-1)
        flat = idx.reshape(-1)
        order = flat.argsort(stable=True)
        counts = torch.bincount(flat, minlength=self.experts)
        counts = counts.cpu().to(counts.device)  # the host reads the counts, as the dispatcher
        token = order // self.k
        out = self.experts_ffn(t.index_select(0, token), counts)
        weights = probs.reshape(-1)[order].unsqueeze(-1).to(out.dtype)
        y = torch.zeros_like(t).index_add_(0, token, out * weights)
        if self.shared is not None:
            y = y + self.shared(t)
        return y.view(b, s, h)


class Layer(nn.Module):
    def __init__(self, p, moe=False):
        super().__init__()
        norm = (lambda: nn.RMSNorm(p["hidden"])) if p["gated"] else (lambda: nn.LayerNorm(p["hidden"]))
        self.norm1, self.norm2 = norm(), norm()
        self.attn = Attention(p["hidden"], p["heads"], p["kv"], bias=not p["gated"])
        self.mlp = MoE(p) if moe else Mlp(p["hidden"], p["ffn"], p["gated"])

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


def timed_steps(step, steps, progress):
    """Runs `step` `steps` times, each timed by CUDA events around it and marked by an NVTX range
    "step N": under nsys, `commprof import-nsys --step-range "step "` takes these steps (and not
    the warm-up or a profiled one). progress(i, ms) after each; returns the times (ms)."""
    times = []
    for i in range(steps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.nvtx.range_push(f"step {i}")
        a.record()
        step()
        b.record()
        b.synchronize()
        torch.cuda.nvtx.range_pop()
        times.append(a.elapsed_time(b))
        progress(i, times[-1])
    return times


def profile_step(step, args):
    """One more step under torch.profiler: its kernels' time by class, from the trace's records."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    trace = args.trace or args.out + ".trace.json"
    prof.export_chrome_trace(trace)
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    by_class = {"gemm": 0.0, "attention": 0.0, "optimizer": 0.0, "other": 0.0}
    kernels = 0
    for e in events:
        if e.get("cat") == "kernel" and "dur" in e:
            by_class[kernel_class(e["name"])] += e["dur"] / 1e3
            kernels += 1
    return by_class, kernels, trace


class Model(nn.Module):
    """The layers, and with a vocabulary the embedding before them and the final norm, LM head
    and cross-entropy over fp32 logits after them."""

    def __init__(self, p):
        super().__init__()
        moe = p.get("experts", 0) > 0
        self.layers = nn.Sequential(*[Layer(p, moe and i >= p.get("dense_layers", 0))
                                      for i in range(p["layers"])])
        self.vocab = padded(p["vocab"]) if p["vocab"] > 0 else 0
        if self.vocab:
            h = p["hidden"]
            self.embedding = nn.Embedding(self.vocab, h)
            self.norm = nn.RMSNorm(h) if p["gated"] else nn.LayerNorm(h)
            self.head = nn.Linear(h, self.vocab, bias=False)
            if p["tied"]:
                self.head.weight = self.embedding.weight

    def forward(self, x, labels):
        if not self.vocab:
            return self.layers(x).float().pow(2).mean()
        logits = self.head(self.norm(self.layers(self.embedding(x))))
        return F.cross_entropy(logits.float().view(-1, self.vocab), labels.view(-1))


def run_preset(args):
    p = dict(PRESETS[args.preset])
    if args.layers:
        p["layers"] = args.layers
    if args.vocab >= 0:
        p["vocab"] = args.vocab
    torch.manual_seed(0)
    dev = torch.device("cuda")
    with torch.device(dev):  # built on the GPU: an MoE preset's experts are billions of weights
        model = Model(p).to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    shape = (p["mb"], p["seq"])
    if p["vocab"] > 0:
        inputs = [(torch.randint(0, p["vocab"], shape, device=dev),
                   torch.randint(0, p["vocab"], shape, device=dev)) for _ in range(p["m"])]
    else:
        inputs = [(torch.randn(*shape, p["hidden"], device=dev, dtype=torch.bfloat16), None)
                  for _ in range(p["m"])]

    def step():
        for x, labels in inputs:
            model(x, labels).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    times = timed_steps(step, args.steps, lambda i, ms: print(
        f"torch_step: {args.preset} step {i + 1}/{args.steps}: {ms:.2f} ms",
        file=sys.stderr, flush=True))

    by_class, kernels, trace = {}, 0, ""
    if not args.no_profile:
        by_class, kernels, trace = profile_step(step, args)
    params = sum(t.numel() for t in model.parameters())
    return {
        "tool": "pytorch", "torch": torch.__version__, "device": torch.cuda.get_device_name(),
        "preset": args.preset, "shape": p, "parameters": params,
        "experts_gemm": next(("torch._grouped_mm" if m.grouped else "one matmul per expert"
                              for m in model.modules() if isinstance(m, MoE)), None),
        "step_ms": {"mean": statistics.mean(times), "min": min(times), "max": max(times),
                    "all": times},
        "kernels": kernels,
        "kernel_ms": dict(by_class, total=sum(by_class.values())) if by_class else None,
        "trace": trace,
    }


def run_gemm(args):
    n = args.gemm
    dev = torch.device("cuda")
    a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    out = {}
    for label, x, y in (("randn", a, b), ("ones", torch.ones_like(a), torch.ones_like(b))):
        for _ in range(10):
            x @ y
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(args.iters):
            x @ y
        e.record()
        e.synchronize()
        us = s.elapsed_time(e) * 1e3 / args.iters
        out[label] = {"us": us, "tflops": 2 * n ** 3 / (us * 1e-6) / 1e12}
    return {"tool": "pytorch", "torch": torch.__version__, "device": torch.cuda.get_device_name(),
            "gemm": n, "dtype": "bfloat16", "iters": args.iters, **out}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", choices=sorted(PRESETS))
    ap.add_argument("--layers", type=int, default=0, help="instead of the preset's")
    ap.add_argument("--vocab", type=int, default=-1,
                    help="vocabulary instead of the preset's; 0: no embedding, head or loss")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--gemm", type=int, default=0, help="time an N^3 bf16 matmul instead")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--trace", default="")
    ap.add_argument("--no-profile", action="store_true",
                    help="skip the profiled step (under nsys, which holds CUPTI itself)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_step.py: no CUDA device visible")
    if bool(args.preset) == bool(args.gemm):
        sys.exit("torch_step.py: give --preset or --gemm")
    result = run_gemm(args) if args.gemm else run_preset(args)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps({k: v for k, v in result.items() if k not in ("step_ms",)}))


if __name__ == "__main__":
    main()
