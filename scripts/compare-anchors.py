#!/usr/bin/env python3
"""Compares commprof bench.json busbw with nccl-tests JSON results (the anchors).

Usage: scripts/compare-anchors.py BENCH_JSON ANCHOR_DIR [--min-bytes N] [--tolerance PCT]
Prints one line per op and size: nccl-tests busbw (out-of-place), commprof busbw from the mean
time (event clock) and from the host clock, and the differences in percent. Exits 1 when a size
at or above --min-bytes differs by more than --tolerance percent (event clock).
"""
import json, os, sys, argparse

NAMES = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
         "alltoall": "alltoall", "broadcast": "broadcast", "sendrecv": "sendrecv",
         # run with --routing uniform: every pair the same count, nccl-tests' alltoall
         "alltoallv": "alltoall"}

p = argparse.ArgumentParser()
p.add_argument("bench"); p.add_argument("anchors")
p.add_argument("--min-bytes", type=int, default=64 << 20)
p.add_argument("--tolerance", type=float, default=2.0)
a = p.parse_args()
ours = json.load(open(a.bench))
bad = 0
print(f"{'op':<14}{'size (B)':>12}{'nccl-tests':>12}{'commprof':>10}{'diff %':>8}{'host-clock':>12}{'diff %':>8}")
for r in ours["results"]:
    name = NAMES.get(r["op"])
    path = os.path.join(a.anchors, f"{name}.json") if name else None
    if not path or not os.path.exists(path):
        continue
    ref = {x["size"]: float(x["out_of_place"]["bus_bw"]) for x in json.load(open(path))["results"]}
    # alltoallv rounds a size down to whole routed tokens (1048560 for 1 MiB): the nccl-tests
    # size within 0.01% is the same point of the curve.
    size = min(ref, key=lambda s: abs(s - r["size_bytes"]), default=None)
    if size is None or abs(size - r["size_bytes"]) > 1e-4 * size:
        continue
    nt = ref[size]
    ev = r["busbw_gbps"]
    host_bw = r["size_bytes"] / (r["host_clock_time_us_avg"] * 1e-6) / 1e9 * r["busbw_factor"]
    d_ev = 100 * (ev - nt) / nt
    d_host = 100 * (host_bw - nt) / nt
    flag = ""
    if r["size_bytes"] >= a.min_bytes and abs(d_ev) > a.tolerance:
        bad += 1
        flag = "  <-- outside tolerance"
    print(f"{r['op']:<14}{r['size_bytes']:>12}{nt:>12.1f}{ev:>10.1f}{d_ev:>+8.2f}{host_bw:>12.1f}{d_host:>+8.2f}{flag}")
print(f"# {bad} sizes >= {a.min_bytes} B outside +-{a.tolerance}% (event clock)")
sys.exit(1 if bad else 0)
