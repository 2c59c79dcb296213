#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Records PyTorch profiler (Kineto) traces of a small DDP training job, one per rank: the
real input `commprof import-torch` reads, and its test data.

    torchrun --nproc-per-node N scripts/torch/ddp_trace.py --out DIR [--backend nccl|gloo]
    python3 scripts/torch/ddp_trace.py --out DIR            # one rank, no launcher

Each rank trains a few pre-norm decoder layers (--layers, --hidden, --seq) under
DistributedDataParallel (bucket 25 MiB, as PyTorch's default) with AdamW, for --wait + --warmup +
--active steps; torch.profiler records the active ones, each a ProfilerStep#N, CPU and (on nccl)
CUDA activity, and writes DIR/rank-<R>.pt.trace.json.gz. nccl needs one GPU per rank; gloo runs
on CPUs (a multi-rank trace without a GPU).
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile, schedule


class Layer(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.qkv, self.out = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.up, self.down = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, h // self.heads).permute(
            2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(y.transpose(1, 2).reshape(b, s, h))
        return x + self.down(F.gelu(self.up(self.norm2(x)), approximate="tanh"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="nccl", choices=["nccl", "gloo"])
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--wait", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--active", type=int, default=2)
    args = ap.parse_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    dist.init_process_group(args.backend)
    rank = dist.get_rank()
    if args.backend == "nccl":
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        dev, dtype = torch.device("cuda", local), torch.bfloat16
    else:
        dev, dtype = torch.device("cpu"), torch.float32
    torch.manual_seed(0)
    model = nn.Sequential(*[Layer(args.hidden, args.heads) for _ in range(args.layers)])
    model = DDP(model.to(dev, dtype), device_ids=[dev.index] if dev.type == "cuda" else None)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(2, args.seq, args.hidden, device=dev, dtype=dtype)
    os.makedirs(args.out, exist_ok=True)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])

    def save(prof):
        prof.export_chrome_trace(os.path.join(args.out, f"rank-{rank}.pt.trace.json.gz"))

    steps = args.wait + args.warmup + args.active
    with profile(activities=activities, on_trace_ready=save,
                 schedule=schedule(wait=args.wait, warmup=args.warmup, active=args.active)) as p:
        for _ in range(steps):
            model(x).float().pow(2).mean().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            p.step()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    dist.destroy_process_group()
    if rank == 0:
        print(f"ddp_trace.py: {args.backend}, {steps} steps ({args.active} profiled), traces in "
              f"{args.out}")


if __name__ == "__main__":
    main()
