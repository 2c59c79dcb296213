#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""commprof's mock step against PyTorch's real step of the same shapes on the same GPU.

    python3 scripts/fidelity/compare.py --commprof RUN_DIR --torch torch.json [--json out.json]
    python3 scripts/fidelity/compare.py --gemm-commprof gemm.txt --gemm-torch gemm.json

RUN_DIR holds the rank files of `commprof run --workload dp --op-timing activity` on one rank;
torch.json is scripts/fidelity/torch_step.py's output. Per metric: commprof, PyTorch, and
commprof / PyTorch (1.00 is a perfect mock). Rank 0's measured steps, averaged:
  step        wall time of a step (commprof: the step record; PyTorch: CUDA events)
  COMP busy   commprof: the COMP ops' time (one in-order stream, so their sum is the busy time);
              PyTorch: every kernel's time
  linear GEMM commprof: the qkv, out_proj and ffn GEMMs; PyTorch: GEMM kernels
  attention   commprof: the fused attention ops (or, --attention gemm, the attn_scores and
              attn_context GEMMs); PyTorch: flash attention (cuDNN)
  other       commprof: the memory-bound ops but the optimizer; PyTorch: every other kernel
  optimizer   commprof: optimizer.*; PyTorch: the fused AdamW kernels
"""
import argparse
import json
import re
import sys


def commprof_metrics(run_dir):
    with open(f"{run_dir}/rank-0.json") as f:
        t = json.load(f)
    steps = [s for s in t["steps"] if not s["warmup"]]
    if not steps:
        sys.exit(f"compare.py: {run_dir}/rank-0.json has no measured step")
    sums = {"step": 0.0, "comp": 0.0, "gemm": 0.0, "attention": 0.0, "optimizer": 0.0,
            "other": 0.0}
    for s in steps:
        sums["step"] += (s["end_ns"] - s["start_ns"]) / 1e6
        for op in s["ops"]:
            if op["category"] != "COMP":
                continue
            ms = (op["end_ns"] - op["start_ns"]) / 1e6
            sums["comp"] += ms
            name = op["name"]
            if name.startswith("optimizer"):
                sums["optimizer"] += ms
            elif re.search(r"\.(attn_scores|attn_context|attention)\.", name):
                sums["attention"] += ms
            elif op["flops"] > 0:
                sums["gemm"] += ms
            else:
                sums["other"] += ms
    n = len(steps)
    return {k: v / n for k, v in sums.items()}, t["config"], n


def torch_metrics(path):
    with open(path) as f:
        r = json.load(f)
    k = r["kernel_ms"]
    return {"step": r["step_ms"]["mean"], "comp": k["total"], "gemm": k["gemm"],
            "attention": k["attention"], "optimizer": k["optimizer"], "other": k["other"]}, r


ROWS = [("step", "step time (ms)"), ("comp", "COMP busy / kernel time (ms)"),
        ("gemm", "linear-layer GEMMs (ms)"), ("attention", "attention (ms)"),
        ("other", "other (element-wise, norms) (ms)"), ("optimizer", "optimizer (ms)")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commprof")
    ap.add_argument("--torch")
    ap.add_argument("--gemm-commprof", help="output of `commprof gemm`")
    ap.add_argument("--gemm-torch", help="torch_step.py --gemm output")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    out = {}
    if args.gemm_commprof and args.gemm_torch:
        text = open(args.gemm_commprof).read()
        found = re.search(r"mean ([0-9.]+) .*TFLOP/s", text)
        if not found:
            sys.exit(f"compare.py: no TFLOP/s line in {args.gemm_commprof}")
        mine = float(found.group(1))
        theirs = json.load(open(args.gemm_torch))
        print(f"# GEMM {theirs['gemm']}^3 bf16 on {theirs['device']} (torch {theirs['torch']})")
        print(f"  commprof gemm          {mine:10.1f} TFLOP/s")
        for label in ("randn", "ones"):
            print(f"  torch matmul, {label:6s}   {theirs[label]['tflops']:10.1f} TFLOP/s"
                  f"   commprof / torch {mine / theirs[label]['tflops']:.3f}")
        out["gemm"] = {"commprof_tflops": mine, "torch": theirs}
    if args.commprof and args.torch:
        mine, config, n = commprof_metrics(args.commprof)
        theirs, r = torch_metrics(args.torch)
        model = config.get("model", {})
        print(f"# {r['preset']}: {model.get('layers')} layers, h {model.get('hidden')}, "
              f"seq {model.get('seq')}, micro-batch {model.get('micro_batch')} x "
              f"{model.get('micro_batches')}, {model.get('dtype')}; {r['device']}, torch "
              f"{r['torch']}; commprof: {n} measured steps, op timing {config.get('op_timing')}")
        print(f"  {'metric':30s} {'commprof':>10s} {'PyTorch':>10s} {'ratio':>7s}")
        rows = {}
        for key, label in ROWS:
            ratio = mine[key] / theirs[key] if theirs[key] > 0 else float("nan")
            rows[key] = {"commprof": mine[key], "pytorch": theirs[key], "ratio": ratio}
            print(f"  {label:30s} {mine[key]:10.2f} {theirs[key]:10.2f} {ratio:7.3f}")
        out["preset"] = {"name": r["preset"], "rows": rows}
    if not out:
        sys.exit("compare.py: give --commprof and --torch, or --gemm-commprof and --gemm-torch")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
