#!/usr/bin/env python3
"""Compares commprof's own rank files of a run with `commprof import-nsys` of the same run's
nsys exports (every rank under scripts/nsys-profile-rank.sh).

Usage: scripts/compare-nsys-import.py RUN_DIR IMPORTED_DIR [--all-steps]

Per rank (RUN_DIR/rank-R.json against IMPORTED_DIR/rank-R.json):
  - steps: the imported steps are the run's measured steps (with --all-steps: all of them, as
    `--capture all` records), same indices and warm-up flags; a capture that began late or ended
    early shows here;
  - COMM ops of each step, as (name, collective, communicator, its size, sequence number, bytes):
    the same multiset, i.e. the NVTX tags carried commprof's own matching keys through nsys;
  - ops of each step per category (COMP, COMM, MEM): the same counts.
Prints one line per check and rank; exits 1 if any differs.
"""
import argparse
import collections
import json
import os
import sys

p = argparse.ArgumentParser()
p.add_argument("run")
p.add_argument("imported")
p.add_argument("--all-steps", action="store_true")
a = p.parse_args()


def load(d, r):
    with open(os.path.join(d, "rank-%d.json" % r)) as f:
        return json.load(f)


ranks = sorted(int(n[5:-5]) for n in os.listdir(a.run) if n.startswith("rank-") and n.endswith(".json"))
if not ranks:
    sys.exit("compare-nsys-import: no rank-<R>.json in %s" % a.run)
bad = 0


def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        bad += 1


def comm_key(op):
    return (op["name"], op["collective"], op["comm"], op["comm_size"], op["seq"], op["bytes"])


for r in ranks:
    if not os.path.exists(os.path.join(a.imported, "rank-%d.json" % r)):
        check(False, "rank %d: no rank-%d.json in %s" % (r, r, a.imported))
        continue
    own, imp = load(a.run, r), load(a.imported, r)
    want = [s for s in own["steps"] if a.all_steps or not s["warmup"]]
    got = imp["steps"]
    check([(s["index"], s["warmup"]) for s in got] == [(s["index"], s["warmup"]) for s in want],
          "rank %d: imported steps %s, commprof's %s" % (
              r, [s["index"] for s in got], [s["index"] for s in want]))
    by_index = {s["index"]: s for s in got}
    comm_ok, cat_ok, n_comm, tagged = True, True, 0, True
    for s in want:
        g = by_index.get(s["index"])
        if g is None:
            comm_ok = cat_ok = False
            continue
        w_comm = collections.Counter(comm_key(o) for o in s["ops"] if o["category"] == "COMM")
        g_comm = collections.Counter(comm_key(o) for o in g["ops"] if o["category"] == "COMM")
        n_comm += sum(w_comm.values())
        if w_comm != g_comm:
            comm_ok = False
            print("     step %d COMM only in commprof: %s" % (s["index"], sorted((w_comm - g_comm).elements())[:4]))
            print("     step %d COMM only in nsys:     %s" % (s["index"], sorted((g_comm - w_comm).elements())[:4]))
        # The old, untagged derivation gives "dp"/"tp" or "streamN", never a group's own name.
        tagged = tagged and all(o["comm"] not in ("dp", "tp", "pp") and not o["comm"].startswith("stream")
                                for o in g["ops"] if o["category"] == "COMM" and o["comm"])
        w_cat = collections.Counter(o["category"] for o in s["ops"])
        g_cat = collections.Counter(o["category"] for o in g["ops"])
        if w_cat != g_cat:
            cat_ok = False
            print("     step %d ops per category: commprof %s, nsys %s" % (s["index"], dict(w_cat), dict(g_cat)))
    check(comm_ok and n_comm > 0, "rank %d: %d COMM ops, (name, collective, comm, size, seq, bytes) equal" % (r, n_comm))
    check(tagged, "rank %d: communicators are the groups' own names (NVTX tags read)" % r)
    check(cat_ok, "rank %d: ops per category equal in every step" % r)

print("compare-nsys-import: %s (%d rank(s))" % ("all checks passed" if bad == 0 else "%d check(s) failed" % bad, len(ranks)))
sys.exit(1 if bad else 0)
