#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the "other" class of a fidelity comparison goes: PyTorch's memory-bound kernels by kernel
and by the operator that launched them, against commprof's memory-bound ops by name.

    python3 scripts/fidelity/other_kernels.py --trace torch-trace.json [--commprof RUN_DIR]

--trace is torch_step.py's profiled step (a torch.profiler chrome trace): every kernel of class
"other" (kernel_classes.py), grouped by its name (templates cut short) and by the aten operator
whose launch it was (the trace links a kernel to its operator by "External id"), with count and
total time. --commprof RUN_DIR: rank 0's COMP ops that are neither GEMMs, attention nor the
optimizer (compare.py's "other"), per measured step, grouped by name with the layer, expert and
micro-batch numbers taken out.
"""
import argparse
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kernel_classes import kernel_class  # noqa: E402 (beside this file)


def short_kernel(name):
    """A kernel's name without its template arguments but the functor it applies: what tells a
    vectorised element-wise kernel from a strided one, and which operation each runs."""
    base = re.sub(r"^void ", "", name).replace("(anonymous namespace)::", "")
    head = base.split("<", 1)[0].split("(", 1)[0]
    head = re.sub(r"^.*::", "", head)
    functor = re.findall(r"([A-Za-z]+(?:Functor|_kernel_cuda|_kernel_impl|Op)\w*)", base)
    lam = re.findall(r"(\w+_kernel\w*)::\{lambda", base)
    extra = (functor or lam)[:1]
    return head + (f"<{extra[0]}>" if extra else "")


def torch_other(trace):
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    ops = {}
    for e in events:
        if e.get("cat") == "cpu_op" and "External id" in e.get("args", {}):
            ops[e["args"]["External id"]] = e["name"]
    by_kernel = collections.defaultdict(lambda: [0, 0.0])
    by_op = collections.defaultdict(lambda: [0, 0.0])
    total = 0.0
    for e in events:
        if e.get("cat") != "kernel" or "dur" not in e or kernel_class(e["name"]) != "other":
            continue
        ms = e["dur"] / 1e3
        total += ms
        op = ops.get(e.get("args", {}).get("External id"), "?")
        k = short_kernel(e["name"])
        by_kernel[(k, op)][0] += 1
        by_kernel[(k, op)][1] += ms
        by_op[op][0] += 1
        by_op[op][1] += ms
    return total, by_kernel, by_op


def commprof_other(run_dir):
    with open(f"{run_dir}/rank-0.json") as f:
        t = json.load(f)
    steps = [s for s in t["steps"] if not s["warmup"]]
    by_name = collections.defaultdict(lambda: [0, 0.0, 0])
    total = 0.0
    for s in steps:
        for op in s["ops"]:
            if op["category"] != "COMP" or op["flops"] > 0:
                continue
            name = op["name"]
            if name.startswith("optimizer") or re.search(r"\.(attention)\.", name):
                continue
            ms = (op["end_ns"] - op["start_ns"]) / 1e6 / len(steps)
            key = re.sub(r"\d+", "N", name)
            by_name[key][0] += 1
            by_name[key][1] += ms
            by_name[key][2] += op.get("bytes", 0)
            total += ms
    n = len(steps)
    return total, {k: [c // n, ms, b // n] for k, (c, ms, b) in by_name.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", required=True)
    ap.add_argument("--commprof", default="")
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    total, by_kernel, by_op = torch_other(args.trace)
    print(f"# PyTorch: 'other' kernels {total:.2f} ms in the profiled step")
    print(f"  {'ms':>8s} {'count':>6s}  kernel  [operator]")
    for (k, op), (c, ms) in sorted(by_kernel.items(), key=lambda x: -x[1][1])[:args.top]:
        print(f"  {ms:8.3f} {c:6d}  {k}  [{op}]")
    print("# by operator")
    for op, (c, ms) in sorted(by_op.items(), key=lambda x: -x[1][1])[:args.top]:
        print(f"  {ms:8.3f} {c:6d}  {op}")
    if args.commprof:
        total, by_name = commprof_other(args.commprof)
        print(f"# commprof: 'other' ops {total:.2f} ms per measured step")
        print(f"  {'ms':>8s} {'count':>6s} {'GB':>8s} {'GB/s':>7s}  op")
        for k, (c, ms, b) in sorted(by_name.items(), key=lambda x: -x[1][1])[:args.top]:
            print(f"  {ms:8.3f} {c:6d} {b / 1e9:8.3f} {b / 1e6 / ms if ms else 0:7.0f}  {k}")


if __name__ == "__main__":
    main()
