#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A small DDP (or FSDP) training job of a known number of steps, each timed by the job itself
with CUDA events: the reference a capture by commprof's NCCL profiler plugin is cut against (the steps
`commprof report` finds in the capture, their count and their time).

    NCCL_PROFILER_PLUGIN=.../libnccl-profiler-commprof.so COMMPROF_PLUGIN_OUT=DIR/capture \\
      torchrun --nproc-per-node 2 scripts/torch/ddp_steps.py --out DIR [--steps 12]

Each rank trains --layers pre-norm decoder layers (scripts/torch/ddp_trace.py's, bf16) under
DistributedDataParallel (bucket 25 MiB, PyTorch's default) with AdamW for --steps steps; a CUDA
event before each step's forward and after its optimizer step times it on the GPU. Rank R writes
DIR/steps-<R>.json: {"steps": N, "step_ms": [...]} (every step, the first included: DDP's first
step all-reduces its buckets in parameter order and rebuilds them after it, so it differs).
--fsdp shards each layer and the whole model with FSDP2 (`fully_shard`) instead: a step is then
an all-gather per layer forward and again backward, and a reduce-scatter per layer.
Each step is also an NVTX range "step <i>" (from 0), what `commprof import-nsys --step-range
"step "` cuts an nsys recording of the job by. Under mpirun (one process per rank, each in its own
`nsys profile`: scripts/nsys-profile-rank.sh) the ranks come from Open MPI's variables and the
rendezvous from MASTER_ADDR and MASTER_PORT (default 127.0.0.1:29557).
"""
import argparse
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from ddp_trace import Layer


def launcher_env():
    """torchrun sets RANK, WORLD_SIZE and LOCAL_RANK; mpirun sets its own: the same from them."""
    if "RANK" in os.environ or "OMPI_COMM_WORLD_RANK" not in os.environ:
        return
    os.environ["RANK"] = os.environ["OMPI_COMM_WORLD_RANK"]
    os.environ["WORLD_SIZE"] = os.environ["OMPI_COMM_WORLD_SIZE"]
    os.environ["LOCAL_RANK"] = os.environ["OMPI_COMM_WORLD_LOCAL_RANK"]
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29557")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--fsdp", action="store_true", help="FSDP2 fully_shard instead of DDP")
    args = ap.parse_args()
    launcher_env()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Layer(args.hidden, args.heads) for _ in range(args.layers)])
    model = model.to(dev, torch.bfloat16)
    if args.fsdp:
        from torch.distributed.fsdp import fully_shard
        for layer in model:
            fully_shard(layer)
        fully_shard(model)
    else:
        model = DDP(model, device_ids=[local])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(4, args.seq, args.hidden, device=dev, dtype=torch.bfloat16)
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(args.steps)]
    for i, (begin, end) in enumerate(events):
        torch.cuda.nvtx.range_push(f"step {i}")
        begin.record()
        model(x).float().pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        end.record()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    step_ms = [begin.elapsed_time(end) for begin, end in events]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"steps-{rank}.json"), "w") as f:
        json.dump({"steps": args.steps, "step_ms": step_ms}, f)
    dist.destroy_process_group()
    if rank == 0:
        kind = "FSDP" if args.fsdp else "DDP"
        print(f"ddp_steps.py: {kind}, {args.steps} steps, mean "
              f"{sum(step_ms[1:]) / (args.steps - 1):.3f} "
              f"ms after the first, step times in {args.out}/steps-<R>.json")


if __name__ == "__main__":
    main()
