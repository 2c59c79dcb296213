#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The NCCL profiler plugin's view of an nccl-tests run against nccl-tests' own figures.

    python3 scripts/compare-plugin.py --op allreduce --nccl-tests run.json --plugin DIR \
        --report report.json [--plain plain1.json plain2.json ...] [--with run2.json ...]

run.json: nccl-tests' -J output of the run the plugin watched; DIR: the rank files the plugin
wrote in that run; report.json: `commprof report DIR --format json`. Per message size:
nccl-tests' out-of-place busbw; commprof report's busbw (the median of each collective's
shortest rank duration, over every call of that size: warm-up, out-of-place and in-place); the
same computed here from the rank files alone (each call matched across ranks by communicator and
sequence number, its time the longest rank's kernel time); and, with --plain/--with, nccl-tests'
out-of-place time without and with the plugin (means over the runs given): the plugin's cost.
"""
import argparse
import glob
import json
import statistics

FACTOR = {"allreduce": lambda n: 2 * (n - 1) / n, "allgather": lambda n: (n - 1) / n,
          "reducescatter": lambda n: (n - 1) / n, "sendrecv": lambda n: 1.0,
          "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0, "alltoall": lambda n: (n - 1) / n}


def nccl_tests(path):
    with open(path) as f:
        return {int(r["size"]): r for r in json.load(f)["results"]}


def from_rank_files(run_dir, op):
    calls = {}  # (comm, seq) -> list of (rank, bytes, duration, size)
    n = 0
    for path in glob.glob(f"{run_dir}/rank-*.json"):
        with open(path) as f:
            t = json.load(f)
        n = max(n, t["world_size"])
        for s in t["steps"]:
            for o in s["ops"]:
                if o["category"] != "COMM" or o["collective"] != op:
                    continue
                key = (o["comm"], o["seq"], t["rank"] if o["seq"] < 0 else -1)
                calls.setdefault(key, []).append((o["bytes"], o["end_ns"] - o["start_ns"],
                                                  o["comm_size"]))
    by_size = {}
    for recs in calls.values():
        by_size.setdefault(recs[0][0], []).append(max(r[1] for r in recs))
    return by_size, n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--op", required=True)
    ap.add_argument("--nccl-tests", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--plain", nargs="*", default=[])
    ap.add_argument("--with", dest="with_", nargs="*", default=[])
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    nt = nccl_tests(a.nccl_tests)
    with open(a.report) as f:
        rep = {(r["collective"], r["bytes"]): r for r in json.load(f)["collectives"]}
    ours, n = from_rank_files(a.plugin, a.op)
    plain = [nccl_tests(p) for p in a.plain]
    with_ = [nccl_tests(p) for p in a.with_]
    rows = []
    print(f"{'size (B)':>12}{'nccl-tests':>12}{'report':>10}{'diff %':>8}{'files':>10}{'diff %':>8}"
          f"{'t plain us':>12}{'t plugin us':>12}{'cost %':>8}")
    for size in sorted(nt):
        ref = float(nt[size]["out_of_place"]["bus_bw"])
        # nccl-tests' size is S for every op but sendrecv, whose size is what each rank sends.
        r = rep.get((a.op, size))
        rb = r["busbw_gbps"] if r else float("nan")
        durations = ours.get(size, [])
        fb = (size / (statistics.median(durations) * 1e-9) / 1e9 * FACTOR[a.op](max(n, 2))
              if durations else float("nan"))
        tp = statistics.mean(float(p[size]["out_of_place"]["time"]) for p in plain) if plain else float("nan")
        tw = statistics.mean(float(p[size]["out_of_place"]["time"]) for p in with_) if with_ else float("nan")
        # On one rank nccl-tests reports a busbw of 0 and NCCL sends the plugin no event.
        diff = (lambda x: 100 * (x - ref) / ref) if ref > 0 else (lambda x: float("nan"))
        row = {"size": size, "nccl_tests_busbw": ref, "report_busbw": rb, "files_busbw": fb,
               "report_diff_pct": diff(rb), "files_diff_pct": diff(fb),
               "calls": len(durations), "time_plain_us": tp, "time_plugin_us": tw,
               "cost_pct": 100 * (tw - tp) / tp if plain and with_ else None}
        rows.append(row)
        cost = f"{row['cost_pct']:>+8.2f}" if row["cost_pct"] is not None else f"{'':>8}"
        print(f"{size:>12}{ref:>12.2f}{rb:>10.2f}{row['report_diff_pct']:>+8.2f}{fb:>10.2f}"
              f"{row['files_diff_pct']:>+8.2f}{tp:>12.1f}{tw:>12.1f}{cost}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"op": a.op, "ranks": n, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
