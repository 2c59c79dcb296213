#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-rank means of two `commprof report --format json` files side by side: step time, busy
time per category (difference in %) and overlap (difference in percentage points).

    scripts/compare-reports.py A.report.json B.report.json   # B is the reference
"""
import json
import sys


def per_rank(path):
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    out = {}
    for r in report["ranks"]:
        m = lambda key: r[key]["mean"]  # noqa: E731
        comm = m("comm_busy_ns")
        out[r["rank"]] = {
            "step": m("step_time_ns"),
            "COMP": m("comp_busy_ns"),
            "COMM": comm,
            "MEM": m("mem_busy_ns"),
            "overlap": 100.0 * m("comm_comp_overlap_ns") / comm if comm > 0 else float("nan"),
        }
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = per_rank(sys.argv[1]), per_rank(sys.argv[2])
    print(f"# A = {sys.argv[1]}\n# B = {sys.argv[2]} (reference)")
    print(f"{'rank':>4} {'metric':>8} {'A':>12} {'B':>12} {'A-B':>9}")
    for rank in sorted(set(a) & set(b)):
        for key in ("step", "COMP", "COMM", "MEM"):
            va, vb = a[rank][key] / 1e3, b[rank][key] / 1e3
            print(f"{rank:>4} {key + ' us':>8} {va:12.1f} {vb:12.1f} {100 * (va - vb) / vb:+8.2f}%")
        va, vb = a[rank]["overlap"], b[rank]["overlap"]
        print(f"{rank:>4} {'overlap':>8} {va:11.2f}% {vb:11.2f}% {va - vb:+7.2f}pp")


if __name__ == "__main__":
    main()
