#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The calls of the NCCL profiler plugin's rank files that do not match across ranks.

    python3 scripts/plugin-mismatches.py DIR [--show N]

DIR: the rank files the plugin wrote (rank-<R>.json). Calls are matched as `commprof report`
matches them, by (communicator, sequence number); a pair is listed when its ranks recorded
different calls there (kind or bytes), or one rank recorded more than one call there. Prints
the number of pairs per communicator, then each listed pair with what every rank recorded
(the first N, default 20). Exit status 0 when every pair matches, 1 otherwise, 2 when DIR holds
no rank file.
"""
import argparse
import glob
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--show", type=int, default=20)
    a = ap.parse_args()
    paths = sorted(glob.glob(f"{a.dir}/rank-*.json"))
    if not paths:
        print(f"plugin-mismatches: no rank-*.json in {a.dir}", file=sys.stderr)
        return 2
    calls = {}  # (comm, seq) -> {rank: ["allgather 16 B", ...]}
    for path in paths:
        with open(path) as f:
            t = json.load(f)
        for step in t["steps"]:
            for o in step["ops"]:
                if o["category"] != "COMM" or o.get("seq", -1) < 0:
                    continue
                calls.setdefault((o["comm"], o["seq"]), {}).setdefault(t["rank"], []).append(
                    f"{o['collective']} {o['bytes']} B")
    per_comm = {}
    for comm, _ in calls:
        per_comm[comm] = per_comm.get(comm, 0) + 1
    for comm, n in sorted(per_comm.items()):
        print(f"{comm}: {n} calls")
    bad = [(key, ranks) for key, ranks in sorted(calls.items())
           if len({tuple(v) for v in ranks.values()}) > 1 or any(len(v) > 1 for v in ranks.values())]
    print(f"{len(bad)} of {len(calls)} (communicator, seq) pairs differ across ranks "
          "or repeat on a rank")
    for (comm, seq), ranks in bad[:a.show]:
        seen = "; ".join(f"rank {r}: {', '.join(v)}" for r, v in sorted(ranks.items()))
        print(f"  {comm} #{seq}: {seen}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
