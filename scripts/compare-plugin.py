#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The NCCL profiler plugin's view of an nccl-tests run against nccl-tests' own figures.

    python3 scripts/compare-plugin.py --op allreduce --nccl-tests run.json --plugin DIR \
        --report report.json [--plain plain1.json plain2.json ...] [--with run2.json ...]

run.json: nccl-tests' -J output of the run the plugin watched; DIR: the rank files the plugin
wrote in that run; report.json: `commprof report DIR --format json`. Per message size:
nccl-tests' out-of-place busbw; commprof report's busbw (the median of each collective's
shortest rank duration, over the out-of-place calls of that size where the report names each
row's placement, else over every call of that size: warm-up, out-of-place and in-place); the
same computed here from the rank files alone (each call matched across ranks by communicator and
sequence number, its time the longest rank's kernel time); the same from the timed calls' starts
("back to back": two timed calls of one communicator with only calls of the same collective and
size between them, timed or listed untimed, take (start to start) / (calls apart) each, as
nccl-tests times its loop of back-to-back calls: kernel, launch and the gap to the next call; the
median over every such pair of every rank in nccl-tests' out-of-place loops (told by each call's
placement where the plugin recorded it, else as the first half of each size's run of calls),
calls whose times NCCL took from a later call left out); and, with --plain/--with, nccl-tests' out-of-place
time without and with the plugin (means over the runs given): the plugin's cost.
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


def nccl_tests_iters(path):
    """-n of the nccl-tests run (its default 20): the calls of each timed loop."""
    with open(path) as f:
        args = json.load(f).get("args", [])
    for flag, value in zip(args, args[1:]):
        if flag in ("-n", "--iters"):
            return int(value)
    return 20


def back_to_back(run_dir, op, iters):
    """Per size: the period of each pair of timed calls with only the same calls between them,
    in nccl-tests' out-of-place loop (its in-place loop can be faster: all-gather at 1 GiB on 2
    H200). Where the calls say their placement, the out-of-place calls of a run of at least iters
    of them; else both calls in the first half of a run of at least 2 x iters calls."""
    periods = {}
    for path in glob.glob(f"{run_dir}/rank-*.json"):
        with open(path) as f:
            t = json.load(f)
        # (comm, seq) -> (collective, bytes, in place or None) of every call, timed or untimed
        kinds = {}
        for c in t.get("config", {}).get("communicators", []):
            groups = c.get("untimed", [])
            for seq, _, g in c.get("untimed_calls", []):
                if g < len(groups):
                    kinds[(c["name"], seq)] = (groups[g].get("collective"), groups[g].get("bytes"),
                                               groups[g].get("in_place"))
        timed = {}
        for s in t["steps"]:
            for o in s["ops"]:
                if o["category"] == "COMM" and o["seq"] >= 0:
                    kinds[(o["comm"], o["seq"])] = (o["collective"], o["bytes"], o.get("in_place"))
                    if o["collective"] == op:
                        timed.setdefault(o["comm"], []).append(o)
        # Each call's run of like calls: its first call and its length.
        run_of = {}
        for (comm, seq), kind in sorted(kinds.items()):
            prev = run_of.get((comm, seq - 1))
            if prev and kinds.get((comm, seq - 1)) == kind:
                prev[1] += 1
                run_of[(comm, seq)] = prev
            else:
                run_of[(comm, seq)] = [seq, 1]
        for comm, ops in timed.items():
            ops.sort(key=lambda o: o["seq"])
            # NCCL keeps each channel's last 64 works' GPU times in a ring its proxy thread reads;
            # a proxy more than 64 works behind reads a later work's times for an earlier one
            # (NCCL 2.28, src/plugin/profiler.cc: `base <= counter`). Such a call carries the same
            # times as a later call, or starts after it: its times are not its own.
            later = set()
            for i, o in enumerate(ops):
                if any((p["start_ns"], p["end_ns"]) == (o["start_ns"], o["end_ns"]) or
                       p["start_ns"] < o["start_ns"] for p in ops[i + 1:i + 1 + 8]):
                    later.add(o["seq"])
            ops = [o for o in ops if o["seq"] not in later]
            for a, b in zip(ops, ops[1:]):
                first, length = run_of[(comm, a["seq"])]
                in_place = kinds[(comm, a["seq"])][2]
                if in_place is None:
                    outside = length < 2 * iters or 2 * (b["seq"] - first) >= length
                else:
                    outside = in_place != 0 or length < iters
                if run_of[(comm, b["seq"])][0] != first or outside:
                    continue
                periods.setdefault(a["bytes"], []).append(
                    (b["start_ns"] - a["start_ns"]) / (b["seq"] - a["seq"]))
    return periods


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
        # nccl-tests' headline is its out-of-place loop: that row where rows name their placement.
        rep = {(r["collective"], r["bytes"]): r for r in json.load(f)["collectives"]
               if r.get("placement") != "in place"}
    ours, n = from_rank_files(a.plugin, a.op)
    loops = back_to_back(a.plugin, a.op, nccl_tests_iters(a.nccl_tests))
    plain = [nccl_tests(p) for p in a.plain]
    with_ = [nccl_tests(p) for p in a.with_]
    rows = []
    print(f"{'size (B)':>12}{'nccl-tests':>12}{'report':>10}{'diff %':>8}{'files':>10}{'diff %':>8}"
          f"{'b2b':>10}{'diff %':>8}{'pairs':>7}{'t plain us':>12}{'t plugin us':>12}{'cost %':>8}")
    for size in sorted(nt):
        ref = float(nt[size]["out_of_place"]["bus_bw"])
        # nccl-tests' size is S for every op but sendrecv, whose size is what each rank sends.
        r = rep.get((a.op, size))
        rb = r["busbw_gbps"] if r else float("nan")
        durations = ours.get(size, [])
        fb = (size / (statistics.median(durations) * 1e-9) / 1e9 * FACTOR[a.op](max(n, 2))
              if durations else float("nan"))
        pairs = loops.get(size, [])
        bb = (size / (statistics.median(pairs) * 1e-9) / 1e9 * FACTOR[a.op](max(n, 2))
              if pairs else float("nan"))
        tp = statistics.mean(float(p[size]["out_of_place"]["time"]) for p in plain) if plain else float("nan")
        tw = statistics.mean(float(p[size]["out_of_place"]["time"]) for p in with_) if with_ else float("nan")
        # On one rank nccl-tests reports a busbw of 0 and NCCL sends the plugin no event.
        diff = (lambda x: 100 * (x - ref) / ref) if ref > 0 else (lambda x: float("nan"))
        row = {"size": size, "nccl_tests_busbw": ref, "report_busbw": rb, "files_busbw": fb,
               "report_diff_pct": diff(rb), "files_diff_pct": diff(fb),
               "back_to_back_busbw": bb, "back_to_back_diff_pct": diff(bb),
               "back_to_back_pairs": len(pairs),
               "calls": len(durations), "time_plain_us": tp, "time_plugin_us": tw,
               "cost_pct": 100 * (tw - tp) / tp if plain and with_ else None}
        rows.append(row)
        cost = f"{row['cost_pct']:>+8.2f}" if row["cost_pct"] is not None else f"{'':>8}"
        print(f"{size:>12}{ref:>12.2f}{rb:>10.2f}{row['report_diff_pct']:>+8.2f}{fb:>10.2f}"
              f"{row['files_diff_pct']:>+8.2f}{bb:>10.2f}{row['back_to_back_diff_pct']:>+8.2f}"
              f"{len(pairs):>7}{tp:>12.1f}{tw:>12.1f}{cost}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"op": a.op, "ranks": n, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
