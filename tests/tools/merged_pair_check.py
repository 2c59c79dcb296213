#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The rank files `commprof report CAPTURE TRACE --merged-out DIR` wrote, against the PyTorch
# traces themselves (read here, not through commprof): on every rank the merged collectives are
# as many as the trace's NCCL kernels, each lasting what that kernel lasted within TOL_US (the
# plugin times the kernel's channels, the trace the kernel), with the plugin's NCCL algorithm and
# protocol; and the report (JSON) has each rank's overlap as a number, not n/a.
# Usage: merged_pair_check.py MERGED_DIR TRACE_DIR REPORT_JSON TOL_US
import glob
import gzip
import json
import sys

merged, traces, report, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
fail = 0
for path in sorted(glob.glob(f"{traces}/rank-*.pt.trace.json.gz")):
    rank = int(path.split("rank-")[1].split(".")[0])
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    kernels = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
                      and e["name"].startswith("ncclDevKernel")), key=lambda e: e["ts"])
    with open(f"{merged}/rank-{rank}.json") as f:
        t = json.load(f)
    comm = sorted((o for s in t["steps"] for o in s["ops"] if o["category"] == "COMM"),
                  key=lambda o: o["start_ns"])
    if len(comm) != len(kernels):
        print(f"FAIL rank {rank}: {len(comm)} merged collectives, {len(kernels)} NCCL kernels")
        fail = 1
        continue
    worst = 0.0
    for o, k in zip(comm, kernels):
        worst = max(worst, abs((o["end_ns"] - o["start_ns"]) / 1e3 - k["dur"]))
        if not o.get("algo") or not o.get("proto"):
            print(f"FAIL rank {rank}: {o['name']} has no algorithm or protocol")
            fail = 1
    print(f"rank {rank}: {len(comm)} collectives, durations within {worst:.1f} us of the trace's "
          f"kernels")
    if worst > tol:
        print(f"FAIL rank {rank}: a duration {worst:.1f} us off (tolerance {tol} us)")
        fail = 1
with open(report) as f:
    ranks = json.load(f)["ranks"]
for r in ranks:
    overlap = r.get("overlap")
    mean = overlap.get("mean") if isinstance(overlap, dict) else overlap
    if not isinstance(mean, (int, float)):
        print(f"FAIL rank {r['rank']}: overlap {overlap!r}, not a number")
        fail = 1
print("merged pair: OK" if not fail else "merged pair: FAILED")
sys.exit(fail)
