#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the NCCL profiler plugin counted, per communicator, from its rank files.

    python3 scripts/plugin-counts.py DIR

DIR: the rank-<R>.json files the plugin wrote. Per communicator (over the ranks whose files name
it): the calls NCCL reported on one rank (the most of any rank), how many of them were timed and
the sample period K (COMMPROF_PLUGIN_SAMPLE), the timed calls whose records were dropped beyond
the memory budget (COMMPROF_PLUGIN_MEMORY_MIB; summed over ranks), and the calls counted by kind
instead of recorded. Exit 1 if DIR holds no rank file.
"""
import glob
import json
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    comms = {}
    budget = None
    paths = sorted(glob.glob(f"{sys.argv[1]}/rank-*.json"))
    for path in paths:
        with open(path) as f:
            config = json.load(f).get("config", {})
        budget = config.get("memory_budget_bytes", budget)
        for c in config.get("communicators", []):
            s = comms.setdefault(c["name"], {"ranks": 0, "calls": 0, "timed": 0, "k": None,
                                             "dropped": 0, "counted": 0})
            s["ranks"] += 1
            s["calls"] = max(s["calls"], c.get("calls", 0))
            s["timed"] = max(s["timed"], c.get("timed", 0))
            s["k"] = c.get("sample_period", s["k"])
            s["dropped"] += c.get("dropped", 0)
            s["counted"] = max(s["counted"], sum(g.get("calls", 0) for g in c.get("untimed", [])))
    if not paths:
        print(f"plugin-counts.py: no rank-*.json in {sys.argv[1]}", file=sys.stderr)
        return 1
    if budget is not None:
        print(f"memory budget per process: {budget / 2**20:g} MiB")
    print(f"{'communicator':<24} {'ranks':>5} {'calls':>10} {'timed':>10} {'K':>6} "
          f"{'dropped':>10} {'counted':>10}")
    for name, s in sorted(comms.items()):
        print(f"{name:<24} {s['ranks']:>5} {s['calls']:>10} {s['timed']:>10} {s['k'] or '-':>6} "
              f"{s['dropped']:>10} {s['counted']:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
