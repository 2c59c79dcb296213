#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The LM head's three GEMMs in PyTorch against commprof's, with the vocabulary padded or not.

    python3 scripts/fidelity/lm_head.py --hidden 2048 --tokens 2048 --vocab 50257 \
        --divisible-by 128 --divisible-by 1 [--commprof 128=RUN_DIR --commprof 1=RUN_DIR] \
        [--json out.json]

PyTorch: the logits of a bf16 nn.Linear(hidden, V', bias=False) over `tokens` rows (forward),
and its backward's two GEMMs (the input's gradient, dgrad; the weight's, wgrad), each timed alone
with CUDA events, the median of --iters calls after --warmup. V' is --vocab rounded up to a
multiple of the divisor (Megatron-LM's make_vocab_size_divisible_by at one TP rank; 1 keeps the
vocabulary as Hugging Face models do, 50,257 for GPT-2). commprof: for each divisor, a
`commprof run --op-timing activity --make-vocab-size-divisible-by D` directory: the mean time of
its head.mb*.fwd, .dgrad and .wgrad ops over the measured steps (rank 0). Times in ms; the ratio
is commprof / PyTorch (1.00: the mock's head costs what PyTorch's does).
"""
import argparse
import json
import re
import statistics
import sys


def torch_times(hidden, tokens, vocab, iters, warmup):
    import torch
    dev = torch.device("cuda")
    x = torch.randn(tokens, hidden, device=dev, dtype=torch.bfloat16)
    w = torch.randn(vocab, hidden, device=dev, dtype=torch.bfloat16)
    dy = torch.randn(tokens, vocab, device=dev, dtype=torch.bfloat16)
    # What autograd runs for F.linear(x, w): y = x wᵀ; dx = dy w; dw = dyᵀ x.
    calls = {"fwd": lambda: torch.nn.functional.linear(x, w),
             "dgrad": lambda: dy @ w,
             "wgrad": lambda: dy.t() @ x}
    out = {}
    for name, f in calls.items():
        for _ in range(warmup):
            f()
        ms = []
        for _ in range(iters):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            f()
            b.record()
            b.synchronize()
            ms.append(a.elapsed_time(b))
        out[name] = statistics.median(ms)
    return out


def commprof_times(run_dir):
    with open(f"{run_dir}/rank-0.json") as f:
        t = json.load(f)
    sums, counts = {}, {}
    for s in t["steps"]:
        if s["warmup"]:
            continue
        for op in s["ops"]:
            m = re.fullmatch(r"head\.mb\d+\.(fwd|dgrad|wgrad)", op["name"])
            if m:
                sums[m.group(1)] = sums.get(m.group(1), 0.0) + (op["end_ns"] - op["start_ns"]) / 1e6
                counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    if not counts:
        sys.exit(f"lm_head.py: {run_dir}/rank-0.json has no timed head.mb*.fwd/dgrad/wgrad op")
    return {k: sums[k] / counts[k] for k in sums}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, required=True)
    ap.add_argument("--tokens", type=int, required=True, help="rows: micro-batch x sequence")
    ap.add_argument("--vocab", type=int, required=True)
    ap.add_argument("--divisible-by", type=int, action="append", required=True)
    ap.add_argument("--commprof", action="append", default=[], help="D=RUN_DIR")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    runs = dict(a.split("=", 1) for a in args.commprof)
    result = []
    print(f"# LM head, hidden {args.hidden}, {args.tokens} tokens, vocabulary {args.vocab} "
          f"(ms per call; ratio commprof / PyTorch)")
    print(f"{'divisor':>8} {'V':>7} {'gemm':>6} {'torch(ms)':>10} {'commprof(ms)':>13} {'ratio':>6}")
    for d in args.divisible_by:
        v = (args.vocab + d - 1) // d * d
        tt = torch_times(args.hidden, args.tokens, v, args.iters, args.warmup)
        ct = commprof_times(runs[str(d)]) if str(d) in runs else {}
        for g in ("fwd", "dgrad", "wgrad"):
            c = ct.get(g)
            print(f"{d:>8} {v:>7} {g:>6} {tt[g]:>10.3f} "
                  f"{(f'{c:.3f}' if c is not None else 'n/a'):>13} "
                  f"{(f'{c / tt[g]:.3f}' if c is not None else 'n/a'):>6}")
        total_t = sum(tt.values())
        total_c = sum(ct.values()) if len(ct) == 3 else None
        print(f"{d:>8} {v:>7} {'all':>6} {total_t:>10.3f} "
              f"{(f'{total_c:.3f}' if total_c is not None else 'n/a'):>13} "
              f"{(f'{total_c / total_t:.3f}' if total_c is not None else 'n/a'):>6}")
        result.append({"divisible_by": d, "vocab": v, "torch_ms": tt, "commprof_ms": ct})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
