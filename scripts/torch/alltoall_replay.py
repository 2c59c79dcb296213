#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Replays the all-to-all(v)s of a commprof run with PyTorch: each instance with the same bytes
per peer, through torch.distributed's all_to_all_single on NCCL, on the same GPUs, and sets the
time of each beside the one the run measured (issue #30 item 7, #33 item 3).

    torchrun --nproc-per-node N scripts/torch/alltoall_replay.py --from DIR [--iters 5]

DIR is a `commprof run` directory of N ranks whose all-to-alls span all of them (an MoE run at
--ep N: the dispatch and combine of every layer, forward and backward, with the routing's
splits). Its rank files must carry each all-to-all's bytes per peer (peer_send_bytes,
peer_recv_bytes: commprof's executor writes them). Each rank reads its own file.

An instance's time, on both sides, is its shortest member's duration: the rank that arrived
last barely waited, so its duration is the transfer's own time (the report's collective time).
commprof's come from the run's files (every measured step that recorded ops); PyTorch's from
--iters calls per instance after a barrier, each rank's median, in the order the run issued
them, measured twice: by CUDA events recorded around the call on the current stream (what a
PyTorch user times: it includes the wait of PyTorch's NCCL stream on the current one and the
kernel's launch), and by the profiler's record of NCCL's kernel itself (what commprof's activity
timing records for its own calls: the kernel's start to its end). Bytes are moved as uint8, so the splits are the files' byte counts exactly. Rank 0 prints
per step the instances, the bytes sent to other ranks, both times and their ratio, and a JSON
summary with --out.
"""
import argparse
import glob
import json
import os
import statistics
import sys

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile


def load_rank_file(run, rank):
    path = os.path.join(run, f"rank-{rank}.json")
    if not os.path.exists(path):
        zst = glob.glob(os.path.join(run, f"rank-{rank}.json.zst"))
        hint = " (zstd rank files: read them with a JSON run instead)" if zst else ""
        sys.exit(f"alltoall_replay.py: no {path}{hint}")
    with open(path) as f:
        return json.load(f)


def instances(rank_file, world):
    """Per measured step with ops: its all-to-alls in issue order as (key, send, recv, ns)."""
    out = {}
    for step in rank_file.get("steps", []):
        if step.get("warmup"):
            continue
        calls = []
        for op in step.get("ops", []):
            if op.get("collective") not in ("alltoall", "alltoallv"):
                continue
            send, recv = op.get("peer_send_bytes"), op.get("peer_recv_bytes")
            if not send or not recv:
                sys.exit("alltoall_replay.py: an all-to-all without peer_send_bytes and "
                         f"peer_recv_bytes ({op.get('name')}): the run's files predate them")
            if len(send) != world or len(recv) != world:
                sys.exit(f"alltoall_replay.py: {op.get('name')} spans {len(send)} ranks, the job "
                         f"{world}: replay runs whose all-to-alls span every rank (--ep N on N)")
            calls.append(((op.get("comm"), op.get("seq")), op.get("name"), send, recv,
                          op["end_ns"] - op["start_ns"]))
        if calls:
            out[step["index"]] = calls
    return out


def kernel_medians(prof, calls, warmup, iters):
    """Per instance, the median duration (ns) of NCCL's send/receive kernel over its timed calls,
    from the profiler's records in launch order (the barriers' kernels are all-reduces, left
    out); None when the records do not come one per call (then the kernel time is missing)."""
    kernels = sorted((e for e in prof.events() if "SendRecv" in e.name),
                     key=lambda e: e.time_range.start)
    per = warmup + iters
    if len(kernels) != calls * per:
        print(f"alltoall_replay.py: {len(kernels)} send/receive kernels recorded for "
              f"{calls * per} calls: no kernel times for this step", file=sys.stderr)
        return None
    return [statistics.median(k.time_range.elapsed_us() * 1e3
                              for k in kernels[c * per + warmup:(c + 1) * per])
            for c in range(calls)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="run", required=True, help="a commprof run directory")
    ap.add_argument("--iters", type=int, default=5, help="timed calls per instance (median)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed calls per instance first")
    ap.add_argument("--out", help="rank 0 writes a JSON summary here")
    args = ap.parse_args()
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dev = torch.device("cuda")
    mine = instances(load_rank_file(args.run, rank), world)
    every = [None] * world
    dist.all_gather_object(every, {s: [c[0] for c in calls] for s, calls in mine.items()})
    if any(e != every[0] for e in every):
        sys.exit("alltoall_replay.py: the ranks' files list different all-to-alls")
    largest_send = max((sum(c[2]) for calls in mine.values() for c in calls), default=0)
    largest_recv = max((sum(c[3]) for calls in mine.values() for c in calls), default=0)
    inp = torch.empty(max(largest_send, 1), dtype=torch.uint8, device=dev)
    out = torch.empty(max(largest_recv, 1), dtype=torch.uint8, device=dev)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    rows, kernel_rows = {}, {}
    for step, calls in sorted(mine.items()):
        timed = []
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _, _, send, recv, _ in calls:
                i, o = inp[:sum(send)], out[:sum(recv)]
                samples = []
                for it in range(args.warmup + args.iters):
                    torch.cuda.synchronize()
                    dist.barrier()
                    start.record()
                    dist.all_to_all_single(o, i, output_split_sizes=recv,
                                           input_split_sizes=send)
                    end.record()
                    end.synchronize()
                    if it >= args.warmup:
                        samples.append(start.elapsed_time(end) * 1e6)  # ms -> ns
                timed.append(statistics.median(samples))
        rows[step] = timed
        kernel_rows[step] = kernel_medians(prof, len(calls), args.warmup, args.iters)
    gathered = [None] * world
    dist.all_gather_object(gathered, {
        "torch": rows,
        "kernel": kernel_rows,
        "run": {s: [c[4] for c in calls] for s, calls in mine.items()},
        "sent": {s: [sum(c[2]) - c[2][rank] for c in calls] for s, calls in mine.items()},
        "names": {s: [c[1] for c in calls] for s, calls in mine.items()}})
    if rank == 0:
        report(gathered, args.out)
    dist.barrier()
    dist.destroy_process_group()


def report(gathered, out_path):
    steps = sorted(gathered[0]["torch"])
    summary = {"steps": []}
    print(f"# all-to-all(v) replay: {len(gathered)} ranks; an instance's time is its shortest "
          "member's duration (ms); sent: bytes to other ranks, summed over ranks; PyTorch's "
          "time by CUDA events around the call, and by the profiler's NCCL kernel record")
    print(f"{'step':>5} {'calls':>6} {'sent (GB)':>10} {'commprof (ms)':>14} {'PyTorch (ms)':>13} "
          f"{'commprof/PyTorch':>17} {'PyTorch kernel (ms)':>20} {'commprof/kernel':>16}")
    for s in steps:
        n = len(gathered[0]["torch"][s])
        run_ns = [min(g["run"][s][i] for g in gathered) for i in range(n)]
        torch_ns = [min(g["torch"][s][i] for g in gathered) for i in range(n)]
        have_kernels = all(g["kernel"].get(s) is not None for g in gathered)
        kernel_ns = ([min(g["kernel"][s][i] for g in gathered) for i in range(n)]
                     if have_kernels else None)
        sent = sum(sum(g["sent"][s]) for g in gathered)
        r, t = sum(run_ns) / 1e6, sum(torch_ns) / 1e6
        k = sum(kernel_ns) / 1e6 if kernel_ns else None
        kernel_cols = (f"{k:>20.3f} {r / k:>16.3f}" if k else f"{'missing':>20} {'n/a':>16}")
        print(f"{s:>5} {n:>6} {sent / 1e9:>10.3f} {r:>14.3f} {t:>13.3f} {r / t:>17.3f} "
              f"{kernel_cols}")
        worst = sorted(range(n), key=lambda i: -abs(run_ns[i] - torch_ns[i]))[:3]
        for i in worst:
            kernel_us = f", its kernel {kernel_ns[i] / 1e3:.1f} us" if kernel_ns else ""
            print(f"      {gathered[0]['names'][s][i]}: commprof {run_ns[i] / 1e3:.1f} us, "
                  f"PyTorch {torch_ns[i] / 1e3:.1f} us{kernel_us}")
        summary["steps"].append({"step": s, "calls": n, "sent_bytes": sent, "commprof_ms": r,
                                 "torch_ms": t, "ratio": r / t, "torch_kernel_ms": k,
                                 "kernel_ratio": r / k if k else None})
    if out_path:
        with open(out_path + ".tmp", "w") as f:
            json.dump(summary, f, indent=1)
        os.replace(out_path + ".tmp", out_path)


if __name__ == "__main__":
    main()
