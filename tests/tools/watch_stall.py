#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Makes a rank file look like an NCCL profiler plugin's whose rank had collectives unfinished when
# it was written: config "unfinished" (as the plugin lists them) and "snapshot_ns" (when, on the
# clock of their enqueue_ns). Usage: watch_stall.py RANK_FILE AGE_S [AGE_S...]: one unfinished
# all-reduce on dp0 per AGE_S, seq 1000, 1001, ..., that old when the file was written.
import json
import sys

path = sys.argv[1]
with open(path) as f:
    rank = json.load(f)
taken = 10**12
rank["config"]["snapshot_ns"] = taken
rank["config"]["unfinished"] = [
    {"comm": "dp0", "collective": "allreduce", "seq": 1000 + i,
     "enqueue_ns": taken - int(float(age) * 1e9)}
    for i, age in enumerate(sys.argv[2:])]
with open(path, "w") as f:
    json.dump(rank, f)
