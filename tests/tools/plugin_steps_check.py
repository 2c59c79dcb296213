#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The steps a plugin capture is cut into against the job's own step times: every rank's report
# figure (step_time_ns, mean over its measured steps) within TOL of the job's mean over the same
# steps (the job's steps FIRST..LAST, 1-based, from job/steps-<R>.json, CUDA events).
# Usage: plugin_steps_check.py REPORT_JSON JOB_DIR FIRST LAST TOL
import json
import sys

report, job, first, last, tol = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
with open(report) as f:
    ranks = json.load(f)["ranks"]
status = 0
for r in ranks:
    with open(f"{job}/steps-{r['rank']}.json") as f:
        steps = json.load(f)["step_ms"][first - 1:last]
    want = sum(steps) / len(steps)
    got = r["step_time_ns"]["mean"] / 1e6
    ratio = got / want
    print(f"rank {r['rank']}: capture {got:.3f} ms a step over {r['step_time_ns']['count']} steps, "
          f"the job's own {want:.3f} ms (steps {first}-{last}): ratio {ratio:.4f}")
    if abs(ratio - 1) > tol:
        print(f"FAIL: rank {r['rank']} off by more than {tol:.0%}")
        status = 1
sys.exit(status)
