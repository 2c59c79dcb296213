#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The report's back-to-back busbw of a plugin capture of an nccl-tests run against nccl-tests' own
# figure for the same calls. nccl-tests runs an out-of-place loop, then an in-place one, of each
# size. Where the report's rows name their placement (a plugin that records each call's buffers),
# each row is checked against its own loop's figure; where they do not (captures of earlier
# plugins), the one row holds both loops' calls, and the reference is bytes x factor over the
# mean of the two loops' times. Every size from MIN_BYTES on must have a back-to-back busbw
# within TOL of it.
# Usage: back_to_back_check.py REPORT_JSON NCCL_TESTS_JSON MIN_BYTES TOL
import json
import os
import sys

report, nccl_tests, min_bytes, tol = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
with open(report) as f:
    rows = {(r["collective"], r["bytes"], r.get("placement")): r for r in json.load(f)["collectives"]}
with open(nccl_tests) as f:
    nt = json.load(f)
op = {"all_reduce_perf": "allreduce", "all_gather_perf": "allgather"}[os.path.basename(nt["args"][0])]
status = 0
checked = 0
for r in nt["results"]:
    size = int(r["size"])
    if size < min_bytes:
        continue
    # busbw / (bytes / time) is nccl-tests' bus factor for this run's ranks.
    oop, ip = r["out_of_place"], r["in_place"]
    factor = float(oop["bus_bw"]) * float(oop["time"]) * 1e3 / size
    loops = {"out of place": float(oop["time"]), "in place": float(ip["time"])}
    if any((op, size, p) in rows for p in loops):
        wanted = [(p, size * factor / (us * 1e3)) for p, us in loops.items()]
    else:
        wanted = [(None, size * factor / (sum(loops.values()) / 2 * 1e3))]
    for placement, want in wanted:
        row = rows.get((op, size, placement))
        got = row["back_to_back_busbw_gbps"] if row else None
        what = f"{op} {size} B" + (f" {placement}" if placement else "")
        if got is None:
            print(f"FAIL: {what}: no back-to-back busbw in the report")
            status = 1
            continue
        ratio = got / want
        print(f"{what}: back-to-back {got:.2f} GB/s, nccl-tests {want:.2f} (out-of-place "
              f"{float(oop['bus_bw']):.2f}, in-place {float(ip['bus_bw']):.2f}): ratio {ratio:.4f}")
        checked += 1
        if abs(ratio - 1) > tol:
            print(f"FAIL: {what} off by more than {tol:.0%}")
            status = 1
if checked == 0:
    print("FAIL: no size checked")
    status = 1
sys.exit(status)
