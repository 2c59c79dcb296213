#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A 2-rank NCCL job with a planted fault, recorded by PyTorch's Flight Recorder and NCCL's RAS:
the real inputs `commprof diagnose` reads, and its test data.

    TORCH_FR_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_FR_DUMP_TEMP_FILE=DIR/fr-timeout-rank \\
      torchrun --nproc-per-node 2 scripts/torch/fr_hang.py --out DIR --fault skip|count|graph [--timeout 8]

Each rank all-reduces --buckets tensors a step (sizes 4 MiB, 1 MiB, 16 KiB, ... in bf16) for
--steps steps. At step --fault-step the victim rank (--victim, default 1) plants the fault at
bucket --fault-bucket: `skip` never issues that all-reduce (nor anything after it: its CPU took
another path), `count` issues it with half the elements (arguments differ), `graph` captures each
step's all-reduces into one CUDA graph (after a warm-up outside it) and replays it once a step,
the victim skipping the replay of --fault-step (a hung CUDA-graph-captured collective: the other
rank's replay waits on the GPU; PyTorch's watchdog does not watch graph work, so the job stays
hung until it ends itself). The victim writes the wall-clock time it planted the fault
(`planted_unix` in DIR/meta-rank<R>.json): how long a live reader took to say the hang. Then each
rank waits
--settle s for the GPU to reach the stuck collective and writes:
  DIR/fr-explicit-rank<R>.pkl   Flight Recorder's pickle dump (_dump_nccl_trace), as on timeout
  DIR/fr-explicit-rank<R>.json  its JSON form (_dump_nccl_trace_json)
  DIR/ras-status.json, .txt     (rank 0) NCCL RAS's status of the job (scripts/torch/ras_status.py)
  DIR/meta.json                 (rank 0) the fault planted: the verdict a reader must reach
and then waits for the process group's watchdog: after --timeout s it times out the stuck
collective and, with TORCH_NCCL_DUMP_ON_TIMEOUT=1, writes its own dump to
TORCH_FR_DUMP_TEMP_FILE<R> (on every rank: the first to time out signals the others through the
store); the job then ends by itself. TORCH_NCCL_ENABLE_TIMING=1 lets the dumps tell a collective
that started on the GPU from one only scheduled.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

import torch
import torch.distributed as dist


def dump(out, rank):
    """Flight Recorder's two public dump forms; a missing one is written down, not invented."""
    c10d = torch._C._distributed_c10d
    notes = {}
    try:
        data = c10d._dump_nccl_trace(includeCollectives=True, includeStackTraces=False,
                                     onlyActive=False)
        with open(os.path.join(out, f"fr-explicit-rank{rank}.pkl"), "wb") as f:
            f.write(data)
        notes["pickle"] = len(data)
    except Exception as e:  # noqa: BLE001 - recorded in meta, the run goes on
        notes["pickle_error"] = repr(e)
    try:
        text = c10d._dump_nccl_trace_json(includeCollectives=True, onlyActive=False)
        if isinstance(text, str):  # bytes in PyTorch 2.11, str in some earlier versions
            text = text.encode()
        with open(os.path.join(out, f"fr-explicit-rank{rank}.json"), "wb") as f:
            f.write(text)
        notes["json"] = len(text)
    except Exception as e:  # noqa: BLE001
        notes["json_error"] = repr(e)
    return notes


def run_graph(args, rank, tensors, numel):
    """The buckets' all-reduces captured into one CUDA graph, replayed once a step; the victim
    skips the replay of --fault-step and everything after it. Returns (all-reduces issued, the
    fault as planted, or None on the other ranks)."""
    # Warm up on a side stream before capture, as PyTorch's CUDA graph notes ask: NCCL's
    # communicator and PyTorch's work bookkeeping are set up outside the graph.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for t in tensors:
            dist.all_reduce(t)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for t in tensors:
            dist.all_reduce(t)
    torch.cuda.synchronize()
    issued = len(tensors)  # the warm-up's (the capture launches nothing)
    planted = None
    for step in range(args.steps):
        if step == args.fault_step and rank == args.victim:
            planted = {"fault": "graph", "victim": args.victim, "step": step,
                       "bucket": 0, "collectives_before": issued, "numel": numel[0],
                       "planted_unix": time.time()}
            break
        graph.replay()
        issued += len(tensors)
        if step < args.fault_step:
            torch.cuda.synchronize()
    return issued, planted


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--fault", required=True, choices=["skip", "count", "graph"])
    ap.add_argument("--victim", type=int, default=1)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--buckets", type=int, default=3)
    ap.add_argument("--fault-step", type=int, default=2)
    ap.add_argument("--fault-bucket", type=int, default=1)
    ap.add_argument("--settle", type=float, default=3.0)
    ap.add_argument("--timeout", type=int, default=8)
    args = ap.parse_args()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=args.timeout),
                            device_id=dev)
    rank = dist.get_rank()
    os.makedirs(args.out, exist_ok=True)
    numel = [(4 << 20) >> (2 * b) >> 1 for b in range(args.buckets)]  # bf16: 2 bytes each
    tensors = [torch.ones(n, device=dev, dtype=torch.bfloat16) for n in numel]
    issued = 0
    planted = None
    if args.fault == "graph":
        issued, planted = run_graph(args, rank, tensors, numel)
    for step in range(args.steps if args.fault != "graph" else 0):
        for b, t in enumerate(tensors):
            if step == args.fault_step and b == args.fault_bucket and rank == args.victim:
                planted = {"fault": args.fault, "victim": args.victim, "step": step, "bucket": b,
                           "collectives_before": issued, "numel": numel[b],
                           "planted_unix": time.time()}
                if args.fault == "skip":
                    break
                t = t[: numel[b] // 2]
                planted["victim_numel"] = t.numel()
            dist.all_reduce(t, async_op=True)
            issued += 1
        if planted is not None and args.fault == "skip":
            break
        if step < args.fault_step:
            torch.cuda.synchronize()
    # The fault is planted: let the GPU reach the collective that cannot finish, then record.
    time.sleep(args.settle)
    notes = dump(args.out, rank)
    print(f"fr_hang.py rank {rank}: issued {issued} all-reduces; dumps {notes}", flush=True)
    if rank == 0:
        here = os.path.dirname(os.path.abspath(__file__))
        for fmt in ("json", "text"):
            with open(os.path.join(args.out, f"ras-status.{fmt}"), "w") as f:
                r = subprocess.run([sys.executable, os.path.join(here, "ras_status.py"),
                                    "--format", fmt, "--verbose"], stdout=f,
                                   stderr=subprocess.PIPE, text=True, timeout=60)
            print(f"fr_hang.py: RAS status ({fmt}): exit {r.returncode} {r.stderr.strip()}",
                  flush=True)
        expected = {"fault": args.fault, "victim": args.victim, "fault_step": args.fault_step,
                    "fault_bucket": args.fault_bucket, "buckets": args.buckets,
                    "numel": numel, "dtype": "bfloat16", "ranks": dist.get_world_size(),
                    "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                    "collectives_issued_by_rank0": issued, "dumps_rank0": notes}
        with open(os.path.join(args.out, "meta.json"), "w") as f:
            json.dump(expected, f, indent=1)
    else:
        with open(os.path.join(args.out, f"meta-rank{rank}.json"), "w") as f:
            json.dump({"planted": planted, "issued": issued, "dumps": notes}, f, indent=1)
    # The watchdog times the stuck collective out after --timeout s and dumps on its own (PyTorch
    # 2.11 then leaves the process running: the job ends here, once the dumps had time).
    time.sleep(args.timeout + 10)
    print(f"fr_hang.py rank {rank}: done", flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
