#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What something costs nccl-tests, from its -J files: runs without it against runs with it.

    python3 scripts/nccl-tests-cost.py --plain OFF1.json OFF2.json ... --with ON1.json ...

Per message size, each run's out-of-place time per call (µs, nccl-tests' own: its timed loop
over its iterations), the median of each side, and the cost: the median with against the median
without. Fresh jobs of one small size vary by several per cent from one to the next, so the
median of several, interleaved, is the figure; each run is listed so that one outlier shows.
Exit 1 if a file is missing a size the first plain run has.
"""
import argparse
import json
import statistics


def times(path):
    with open(path) as f:
        return {int(r["size"]): float(r["out_of_place"]["time"]) for r in json.load(f)["results"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plain", nargs="+", required=True)
    ap.add_argument("--with", dest="with_", nargs="+", required=True)
    a = ap.parse_args()
    plain = [times(p) for p in a.plain]
    with_ = [times(p) for p in a.with_]
    print(f"{'size (B)':>12}  {'without (us), each run':<34}  {'with (us), each run':<34}"
          f"  {'median':>7}  {'median':>7}  {'cost %':>7}")
    status = 0
    for size in sorted(plain[0]):
        off = [t.get(size) for t in plain]
        on = [t.get(size) for t in with_]
        if None in off or None in on:
            print(f"{size:>12}  missing in some run")
            status = 1
            continue
        m_off, m_on = statistics.median(off), statistics.median(on)
        print(f"{size:>12}  {' '.join(f'{t:.1f}' for t in off):<34}  "
              f"{' '.join(f'{t:.1f}' for t in on):<34}  {m_off:7.2f}  {m_on:7.2f}  "
              f"{100 * (m_on / m_off - 1):+7.2f}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
