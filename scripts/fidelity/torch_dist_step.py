#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The reference of commprof's distributed fidelity benchmark (issue #33): a real data-parallel
(or tensor-parallel) training step of a preset's shapes in PyTorch, on NP GPUs, timed, and
traced with torch.profiler for `commprof import-torch`.

    python3 -m torch.distributed.run --nproc-per-node NP scripts/fidelity/torch_dist_step.py \\
        --preset gpt-1.3b [--layers N] --mode ddp|fsdp|tp --out torch.json --trace-dir DIR

The model is scripts/fidelity/torch_step.py's (imported from it: the same layers, the model's
ends, bf16 parameters, fused AdamW), one replica per rank, one GPU per rank (LOCAL_RANK), NCCL.
Every rank runs the preset's `micro_batches` micro-batches of its own tokens, accumulates their
gradients, then steps the optimizer.

--mode ddp: DistributedDataParallel, bucket_cap_mb 25 (--bucket-mb), gradient_as_bucket_view
left at PyTorch's default (False: each bucket is copied in and out around its all-reduce). All
micro-batches but the last run under no_sync(), as DDP users accumulate gradients: the
all-reduces run only during the last micro-batch's backward. commprof's `--workload dp` does the
same (workloads/workload.cpp: a bucket is all-reduced only on the last backward pass; earlier
micro-batches add their gradients, `grad_accum`), with DDP's bucket sizes (1 MiB first, then
25 MiB) in gradient-ready order (DDP's own order from its second iteration on, once it has
rebuilt its buckets; the warm-up steps cover that).

--mode fsdp: FSDP2 (torch.distributed.fsdp.fully_shard), one unit per decoder layer and the root
(embedding, final norm and LM head, tied where the preset ties them), full sharding
(reshard_after_forward=True: ZeRO-3), MixedPrecisionPolicy bf16 for parameters and gradient
reduction (the parameters are already bf16, as on the DDP side and in commprof's mock, so nothing
is cast and the optimizer's moments are bf16 as well). All micro-batches but the last run with
set_requires_gradient_sync(False): gradients accumulate unsharded and are reduce-scattered once,
during the last backward. commprof's `--dp-mode zero` models ZeRO-3 / FSDP full sharding too
(docs/workloads.md, "Data parallelism"): per layer an all-gather of the parameters before its
forward and again before its backward, one layer ahead, a reduce-scatter of its gradients after
the last backward, the optimizer on the rank's shard. Where they differ (said again in
compare_dist.py's output):
  - the ends: the root unit (embedding + final norm + tied head) is one all-gather and one
    reduce-scatter, the mock's two each (the embedding; the final norm with the head), for the
    same bytes. The root is passed reshard_after_forward=True, so it is gathered again for
    backward as the mock's ends are: PyTorch 2.11 does so (seen on 2 H100: per micro-batch two
    all-gathers of the root, two of each layer). An FSDP2 that kept the root gathered from
    forward to backward would gather it once; compare_dist.py prints each side's all-gathers
    and bytes per step, which shows it;
  - FSDP2 copies each unit's shards into one all-gather buffer and out of it, and gradients into
    the reduce-scatter buffer (kernels, so COMP in the trace); the mock has no such copies;
  - FSDP2 shards every tensor on dim 0 (no flat parameter), the mock one flat shard per unit:
    the same bytes per collective;
  - prefetching: FSDP2's defaults (backward: the next unit's all-gather issued before this
    unit's backward; forward: none explicit, but all-gathers run on their own stream and the CPU
    runs ahead of the GPU, so the next layer's is issued while this one computes), the mock's one
    layer ahead both ways;
  - host time: FSDP2's hooks run in Python for every unit and pass (in a 2-layer smoke test on 2
    H100 under the profiler, ~1.5 ms per layer's pre-forward, all-gather and copies), so where
    the GPU's work per layer is shorter the step waits on the CPU; the mock issues its plan
    from C++ and has no such cost.

--mode tp: tensor parallelism over every rank through DTensor (tensor_parallel() below: the
QKV and MLP up projections ColwiseParallel, the attention output and MLP down RowwiseParallel,
as Megatron splits them), the layers only (--vocab 0), every rank the same tokens. Per layer and
micro-batch two all-reduces of the activations in forward and two of their gradients in
backward, as commprof's `--workload tp` (without --sequence-parallel) issues them.

--mode megatron-tp: the same split as Megatron-LM writes it, without DTensor: each rank's slices
of the projections as plain parameters, the forward all-reduces and the backward ones (the
inputs' gradients, each started before the weight's gradient is computed and waited for after,
as Megatron's LinearWithGradAccumulationAndAsyncCommunication overlaps them) in autograd
functions (megatron_tensor_parallel() below). DTensor decides every op's sharding on the host,
in Python; Megatron's layers do not, and that host time is what the two modes differ by.

Timing: --warmup steps, then --steps steps each between two CUDA events (every step ends with a
synchronize, as torch_step.py's), no profiler; rank 0 writes --out with each rank's step times.
Tracing (--trace-dir): then one profiler warm-up step and --trace-steps steps under torch.profiler
(CPU and CUDA activity, a schedule, so each traced step is a ProfilerStep#N range; each step
ends with a synchronize so the range holds its GPU work), each rank writing
DIR/rank-<R>.pt.trace.json.gz, as scripts/torch/ddp_trace.py does; the trace's distributedInfo
gives import-torch the rank. The CUDA-event step times are uninstrumented, as the mock's plain
(sampled) steps are; the traced steps carry the profiler's cost, and COMM busy and overlap come
from them, as the mock's come from its activity-recorded steps.
"""
import argparse
import contextlib
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from torch_step import PRESETS, Model, padded, timed_steps  # noqa: E402 (beside this file)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


def shapes(args):
    """The preset's shapes with --layers and --vocab applied, as torch_step.py applies them."""
    p = dict(PRESETS[args.preset])
    if args.layers:
        p["layers"] = args.layers
    if args.vocab >= 0:
        p["vocab"] = args.vocab
    return p


def nccl_version():
    v = torch.cuda.nccl.version()  # a tuple (2, 28, 9); an int in old versions
    return ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)


def tensor_parallel(model, world):
    """Megatron's tensor parallelism through DTensor (torch.distributed.tensor.parallel) on one
    mesh of every rank: in each layer the QKV projection and the MLP's up projection split by
    output columns (ColwiseParallel: their input replicated, its gradient all-reduced in
    backward), the attention output and the down projection by input rows (RowwiseParallel:
    their output all-reduced in forward); norms and residuals replicated. Each rank's attention
    then runs heads / tp query and kv / tp key/value heads, as Megatron's does. The fused QKV
    weight is split by rows as they lie (query heads, then key, then value heads), so a rank's
    "query" rows are not Megatron's; the shapes, the work and the collectives are."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   parallelize_module)
    mesh = init_device_mesh("cuda", (world,))
    for layer in model.layers:
        parallelize_module(layer, mesh, {"attn.qkv": ColwiseParallel(),
                                         "attn.out": RowwiseParallel(),
                                         "mlp.up": ColwiseParallel(),
                                         "mlp.down": RowwiseParallel()})
        split_heads(layer.attn, world, "tp")
    return model


def split_heads(attn, world, mode):
    """A tensor-parallel rank's attention runs heads / world query and kv / world key/value
    heads of the split projection's output."""
    if attn.heads % world or attn.kv % world:
        sys.exit(f"torch_dist_step.py: --mode {mode}: {attn.heads} query and {attn.kv} "
                 f"key/value heads do not divide by {world} ranks")
    attn.heads //= world
    attn.kv //= world


class _ColumnParallelLinear(torch.autograd.Function):
    """Megatron-LM's column-parallel linear (LinearWithGradAccumulationAndAsyncCommunication,
    without sequence parallelism): forward y = x W^T + b on this rank's output columns; backward
    the input's gradient first, its all-reduce over the tensor-parallel ranks started
    asynchronously, the weight's gradient computed while it runs, then waited for."""

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        ctx.bias = b is not None
        y = torch.matmul(x, w.t())
        return y + b if b is not None else y

    @staticmethod
    def backward(ctx, gy):
        x, w = ctx.saved_tensors
        gx = torch.matmul(gy, w)
        pending = dist.all_reduce(gx, async_op=True)
        g2 = gy.reshape(-1, gy.shape[-1])
        gw = torch.matmul(g2.t(), x.reshape(-1, x.shape[-1]))
        gb = g2.sum(0) if ctx.bias else None
        pending.wait()
        return gx, gw, gb


class _ReduceFromTensorParallel(torch.autograd.Function):
    """Megatron-LM's reduce_from_tensor_model_parallel_region: the row-parallel layer's partial
    output all-reduced in forward; the gradient passes through."""

    @staticmethod
    def forward(ctx, x):
        dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


class ColumnParallel(torch.nn.Module):
    def __init__(self, linear, world):
        super().__init__()
        out = linear.out_features // world
        self.weight = torch.nn.Parameter(linear.weight.detach()[:out].clone())
        self.bias = (torch.nn.Parameter(linear.bias.detach()[:out].clone())
                     if linear.bias is not None else None)

    def forward(self, x):
        return _ColumnParallelLinear.apply(x, self.weight, self.bias)


class RowParallel(torch.nn.Module):
    def __init__(self, linear, world):
        super().__init__()
        cols = linear.in_features // world
        self.weight = torch.nn.Parameter(linear.weight.detach()[:, :cols].contiguous())
        # Added once, after the all-reduce (Megatron's RowParallelLinear).
        self.bias = (torch.nn.Parameter(linear.bias.detach().clone())
                     if linear.bias is not None else None)

    def forward(self, x):
        y = _ReduceFromTensorParallel.apply(torch.matmul(x, self.weight.t()))
        return y + self.bias if self.bias is not None else y


def megatron_tensor_parallel(model, world):
    """Megatron-LM's tensor parallelism written out as it does it: plain tensors, each rank
    holding its slice of the QKV and MLP up projections (column-parallel) and of the attention
    output and MLP down projections (row-parallel), the all-reduces issued by autograd
    functions; no DTensor and its per-op dispatch on the host."""
    for layer in model.layers:
        attn, mlp = layer.attn, layer.mlp
        split_heads(attn, world, "megatron-tp")
        attn.qkv = ColumnParallel(attn.qkv, world)
        attn.out = RowParallel(attn.out, world)
        mlp.up = ColumnParallel(mlp.up, world)
        mlp.down = RowParallel(mlp.down, world)
    return model


def wrap(model, args, dev):
    """The replica under DDP or FSDP2, or the model split by tensor parallelism; the optimizer
    is built afterwards, on what it returns."""
    if args.mode == "tp":
        return tensor_parallel(model, dist.get_world_size())
    if args.mode == "megatron-tp":
        return megatron_tensor_parallel(model, dist.get_world_size())
    if args.mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP
        # gradient_as_bucket_view stays at its default (False), which commprof's mock models.
        return DDP(model, device_ids=[dev.index], bucket_cap_mb=args.bucket_mb)
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16)
    # One unit per decoder layer, then the root, which takes what is left: the embedding, the
    # final norm and the head (one parameter with the embedding where tied, which FSDP2 needs
    # in one unit). reshard_after_forward=True on the root too: ZeRO-3 for every unit, as the
    # mock gathers its ends again for backward (FSDP2's default keeps the root gathered).
    for layer in model.layers:
        fully_shard(layer, mp_policy=mp, reshard_after_forward=True)
    return fully_shard(model, mp_policy=mp, reshard_after_forward=True)


class Optimizers:
    """AdamW over the parameters; under tensor parallelism one AdamW over the split (DTensor)
    parameters and one over the replicated ones (the norms), since one fused or foreach call
    takes tensors of one kind only."""

    def __init__(self, groups, args):
        self.opts = [torch.optim.AdamW(g, lr=1e-5, fused=args.optimizer == "fused",
                                       foreach=args.optimizer == "foreach") for g in groups if g]

    def step(self):
        for o in self.opts:
            o.step()

    def zero_grad(self, set_to_none=True):
        for o in self.opts:
            o.zero_grad(set_to_none=set_to_none)


def optimizer(params, args):
    if args.mode != "tp":
        return Optimizers([params], args)
    from torch.distributed.tensor import DTensor
    return Optimizers([[t for t in params if isinstance(t, DTensor)],
                       [t for t in params if not isinstance(t, DTensor)]], args)


def make_step(model, opt, inputs, mode):
    last = len(inputs) - 1

    def step():
        for i, (x, labels) in enumerate(inputs):
            if mode in ("tp", "megatron-tp"):
                # One replica split across the ranks: nothing to accumulate apart.
                model(x, labels).backward()
            elif mode == "fsdp":
                # Reduce-scatter only in the last micro-batch's backward; before, gradients
                # accumulate unsharded (the mock's ZeRO reduces after the last backward too).
                model.set_requires_gradient_sync(i == last)
                model(x, labels).backward()
            else:
                # DDP's gradient accumulation: no all-reduce before the last micro-batch.
                with contextlib.nullcontext() if i == last else model.no_sync():
                    model(x, labels).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def trace(step, args, rank):
    """One profiler warm-up step, then --trace-steps steps recorded; one trace file per rank."""
    from torch.profiler import ProfilerActivity, profile, schedule
    os.makedirs(args.trace_dir, exist_ok=True)
    path = os.path.join(args.trace_dir, f"rank-{rank}.pt.trace.json.gz")

    def save(prof):
        prof.export_chrome_trace(path)

    dist.barrier()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], on_trace_ready=save,
                 schedule=schedule(wait=0, warmup=1, active=args.trace_steps, repeat=1)) as prof:
        for _ in range(1 + args.trace_steps):
            step()
            # The step's ProfilerStep range (CPU side) then ends after its GPU work, so
            # import-torch's step window holds the step, not only its launches.
            torch.cuda.synchronize()
            prof.step()
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", required=True, choices=sorted(PRESETS))
    ap.add_argument("--layers", type=int, default=0, help="instead of the preset's")
    ap.add_argument("--vocab", type=int, default=-1,
                    help="vocabulary instead of the preset's; 0: no embedding, head or loss")
    ap.add_argument("--mode", choices=["ddp", "fsdp", "tp", "megatron-tp"], default="ddp")
    ap.add_argument("--bucket-mb", type=float, default=25.0, help="DDP's bucket_cap_mb")
    ap.add_argument("--optimizer", choices=["fused", "foreach"], default="fused",
                    help="AdamW implementation (fused: as torch_step.py and the mock)")
    ap.add_argument("--steps", type=int, default=10, help="steps timed with CUDA events")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    ap.add_argument("--trace-dir", default="",
                    help="then trace --trace-steps steps: DIR/rank-<R>.pt.trace.json.gz")
    ap.add_argument("--trace-steps", type=int, default=5)
    ap.add_argument("--out", required=True, help="JSON of the step times (written by rank 0)")
    args = ap.parse_args()
    if args.steps < 1 or args.warmup < 0 or args.trace_steps < 1:
        sys.exit("torch_dist_step.py: --steps and --trace-steps must be >= 1, --warmup >= 0")
    if not torch.cuda.is_available():
        sys.exit("torch_dist_step.py: no CUDA device visible")
    # Without a launcher: one rank (torchrun sets these for every rank).
    for k, v in (("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29534"), ("RANK", "0"),
                 ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0")):
        os.environ.setdefault(k, v)
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    rank, world = dist.get_rank(), dist.get_world_size()

    p = shapes(args)
    torch.manual_seed(0)
    # Built on the GPU (quicker than on the CPU for a billion parameters), then bf16 as in
    # torch_step.py; the same seed on every rank, so the replicas start alike.
    with torch.device(dev):
        model = Model(p)
    model = model.to(torch.bfloat16)
    params = sum(t.numel() for t in model.parameters())
    model = wrap(model, args, dev)
    opt = optimizer(list(model.parameters()), args)
    # Each rank its own tokens, as data parallelism gives it; under tensor parallelism every
    # rank the same ones (one replica split across the ranks).
    tensor_parallel_mode = args.mode in ("tp", "megatron-tp")
    if tensor_parallel_mode and p["vocab"] > 0:
        sys.exit("torch_dist_step.py: --mode tp runs the layers only: give --vocab 0 (the mock's "
                 "--workload tp --vocab 0 alike)")
    if tensor_parallel_mode and p.get("experts", 0) > 0:
        sys.exit("torch_dist_step.py: --mode tp splits dense layers only, not "
                 f"{args.preset}'s experts")
    gen = torch.Generator(device=dev)
    gen.manual_seed(1000 + (0 if tensor_parallel_mode else rank))
    shape = (p["mb"], p["seq"])
    if p["vocab"] > 0:
        inputs = [(torch.randint(0, p["vocab"], shape, device=dev, generator=gen),
                   torch.randint(0, p["vocab"], shape, device=dev, generator=gen))
                  for _ in range(p["m"])]
    else:
        inputs = [(torch.randn(*shape, p["hidden"], device=dev, dtype=torch.bfloat16,
                               generator=gen), None) for _ in range(p["m"])]
    step = make_step(model, opt, inputs, args.mode)

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    def progress(i, ms):
        if rank == 0:
            print(f"torch_dist_step: {args.preset} {args.mode} x{world} step {i + 1}/{args.steps}:"
                  f" {ms:.2f} ms", file=sys.stderr, flush=True)

    times = timed_steps(step, args.steps, progress)
    peak = torch.cuda.max_memory_allocated() / 2**30
    trace_path = trace(step, args, rank) if args.trace_dir else ""

    per_rank = [None] * world
    dist.all_gather_object(per_rank, {"rank": rank, "step_ms": times, "peak_gib": peak,
                                      "device": torch.cuda.get_device_name(dev),
                                      "trace": trace_path})
    if rank == 0:
        flat = [t for r in per_rank for t in r["step_ms"]]
        result = {
            "tool": "pytorch", "torch": torch.__version__,
            "nccl": nccl_version(),
            "device": torch.cuda.get_device_name(dev), "world_size": world,
            "mode": args.mode,
            "sharding": {"ddp": "DDP, bucket_cap_mb %g, gradient_as_bucket_view False, no_sync "
                                "on all micro-batches but the last" % args.bucket_mb,
                         "fsdp": "FSDP2 fully_shard per layer + root, reshard_after_forward "
                                 "(ZeRO-3), bf16, gradient sync on the last micro-batch only",
                         "tp": "DTensor tensor parallelism over every rank: QKV and MLP up "
                               "ColwiseParallel, attention output and MLP down RowwiseParallel",
                         "megatron-tp": "Megatron-LM's tensor parallelism over every rank, plain "
                                        "tensors: column- and row-parallel linear layers, the "
                                        "input gradients' all-reduce beside the weight gradients"
                         }[args.mode],
            "optimizer": f"AdamW ({args.optimizer})",
            "preset": args.preset, "shape": p,
            "padded_vocab": padded(p["vocab"]) if p["vocab"] > 0 else 0,
            "parameters": params,
            "warmup_steps": args.warmup, "trace_steps": args.trace_steps if args.trace_dir else 0,
            "trace_dir": args.trace_dir,
            # Over every rank's timed steps; each rank's own below.
            "step_ms": {"mean": statistics.mean(flat), "median": statistics.median(flat),
                        "min": min(flat), "max": max(flat)},
            "ranks": [{"rank": r["rank"], "device": r["device"], "peak_gib": r["peak_gib"],
                       "trace": r["trace"],
                       "step_ms": {"mean": statistics.mean(r["step_ms"]),
                                   "median": statistics.median(r["step_ms"]),
                                   "min": min(r["step_ms"]), "max": max(r["step_ms"]),
                                   "all": r["step_ms"]}} for r in per_rank],
        }
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
        print(json.dumps({k: v for k, v in result.items() if k != "ranks"}))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
