#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""commprof's data- or tensor-parallel mock step against PyTorch's real one on the same GPUs
(issue #33).

    python3 scripts/fidelity/compare_dist.py --torch TORCH.report.json --mock MOCK.report.json \\
        [--torch-steps torch.json] [--mode ddp|fsdp|tp|megatron-tp] [--label TEXT] [--json F]

TORCH.report.json: `commprof report DIR --format json` of the PyTorch traces imported with
`commprof import-torch DIR/rank-*.pt.trace.json.gz -o DIR` (scripts/fidelity/torch_dist_step.py
--trace-dir); MOCK.report.json: the same of `commprof run --workload dp [--dp-mode zero]` (or,
against --mode tp or megatron-tp, `--workload tp --vocab 0`) of the same shapes on the same GPUs.
--torch-steps: torch_dist_step.py's --out, whose CUDA-event step times are of steps without the
profiler.

Per rank and overall (the mean over ranks of each rank's mean per measured step), PyTorch, the
mock, and mock / PyTorch (overlap: mock - PyTorch in percentage points):
  step       with --torch-steps, PyTorch's uninstrumented steps (CUDA events) against the mock's
             step time (its plain steps under sampled op timing, `step_time_ns`); the goal row
  step, traced  the traced steps: PyTorch's ProfilerStep windows (import-torch) against the
             mock's steps that carried per-op timing (`timed_step_time_ns`); without
             --torch-steps this is the goal row (against `step_time_ns`)
  COMM busy  the union of the NCCL kernels' time per step (`comm_busy_ns`)
  overlap    |COMM and COMP| / |COMM| per step, HTA's (`overlap`)
  exposed    communication no compute hides (`exposed_comm_ns`)
  COMP busy  for reference (`comp_busy_ns`)
Goals (issue #33): step and COMM busy within 10%, overlap within 5 points: PASS or MISS on each
rank and overall; the other rows have no goal. Then, across ranks, per collective: instances and
bytes per step, and bus bandwidth (the time-weighted mean of the report's per-size busbw: bus
bytes / time of the matched instances) of the gradient collectives (DDP: all-reduce; FSDP: the
gradients' reduce-scatter, and the parameters' all-gather beside it).
Exit 0 once compared (MISS is a result, not an error), 1 when a report cannot be used.
"""
import argparse
import json
import sys

# What each collective carries in each mode: the gradient collectives' busbw is the figure asked.
ROLES = {"ddp": {"allreduce": "gradients"},
         "fsdp": {"reducescatter": "gradients", "allgather": "parameters"},
         "tp": {"allreduce": "activations"},
         "megatron-tp": {"allreduce": "activations"}}
# What the mock runs against each mode.
MOCK = {"ddp": "dp", "fsdp": "dp --dp-mode zero", "tp": "tp", "megatron-tp": "tp"}
STEP_TOL = 0.10
COMM_TOL = 0.10
OVERLAP_PP = 5.0

NOTES = {
    "ddp": [
        "PyTorch: DDP, bucket_cap_mb 25, gradient_as_bucket_view False (buckets copied in and "
        "out), no_sync on all micro-batches but the last; the mock (--workload dp): the same "
        "buckets (1 MiB first, then 25 MiB, gradient-ready order), copied in and out, "
        "all-reduced during the last micro-batch's backward only.",
    ],
    "fsdp": [
        "PyTorch: FSDP2 fully_shard per decoder layer + root, reshard_after_forward=True "
        "(ZeRO-3), bf16, gradients reduce-scattered in the last micro-batch only; the mock "
        "(--dp-mode zero) is ZeRO-3 as well: per layer all-gathers before forward and backward "
        "(one layer ahead), a reduce-scatter after the last backward, the optimizer on the shard.",
        "Not alike: the ends are one FSDP2 unit (embedding + final norm + tied head) but two in "
        "the mock (the embedding; the final norm and head): the mock has twice the ends' "
        "all-gathers and reduce-scatters, for the same bytes while FSDP2 gathers its root again "
        "for backward, as PyTorch 2.11 does with reshard_after_forward=True (fewer all-gather "
        "bytes per step on PyTorch's side below would mean its root stayed gathered).",
        "Not alike: FSDP2 copies shards into and out of its collective buffers with kernels "
        "(COMP in the trace), which the mock does not run.",
        "Not alike: FSDP2's per-unit hooks run in Python on the CPU; where they outlast a "
        "layer's GPU work the step is host-bound (idle time in PyTorch's report), which the "
        "mock, issuing from C++, is not.",
    ],
    "tp": [
        "PyTorch: DTensor tensor parallelism over every rank (QKV and MLP up ColwiseParallel, "
        "attention output and MLP down RowwiseParallel), the layers only; the mock (--workload "
        "tp --vocab 0): Megatron's split, the same two all-reduces per layer and micro-batch in "
        "forward (the attention output's, the MLP's) and two in backward (their inputs' "
        "gradients), of the same bytes.",
        "Not alike: DTensor redistributes on the host in Python around every split layer "
        "(where a layer's GPU work is short the step waits on the CPU); the mock issues its "
        "plan from C++.",
    ],
    "megatron-tp": [
        "PyTorch: Megatron-LM's tensor parallelism written out over plain tensors (column- and "
        "row-parallel linear layers, the all-reduces in autograd functions, each input "
        "gradient's all-reduce beside its weight gradient as Megatron overlaps them), the layers "
        "only; the mock (--workload tp --vocab 0): the same two all-reduces per layer and "
        "micro-batch in forward and two in backward, of the same bytes.",
    ],
}


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"compare_dist.py: {path}: {e}")
    if report.get("schema") != "commprof.report":
        sys.exit(f"compare_dist.py: {path}: not a commprof report (schema "
                 f"{report.get('schema')!r}); write it with `commprof report DIR --format json`")
    if not report.get("ranks"):
        sys.exit(f"compare_dist.py: {path}: no rank was reduced")
    return report


def mean_of(row, key):
    """A per-rank field's mean over measured steps (a Stat object in the report); None if n/a."""
    v = row.get(key)
    if isinstance(v, dict):
        return v.get("mean")
    return v


def per_rank(report):
    out = {}
    for r in report["ranks"]:
        ms = lambda key: None if mean_of(r, key) is None else mean_of(r, key) / 1e6  # noqa: E731
        overlap = mean_of(r, "overlap")
        out[r["rank"]] = {
            "step": ms("step_time_ns"),
            "step_timed": ms("timed_step_time_ns"),
            "comm": ms("comm_busy_ns"),
            "overlap": None if overlap is None else 100.0 * overlap,
            "exposed": ms("exposed_comm_ns"),
            "comp": ms("comp_busy_ns"),
            "steps": r.get("steps", 0),
            "timed_steps": r.get("timed_steps", 0),
        }
    return out


def torch_untraced(path):
    """Each rank's mean CUDA-event step time (ms) from torch_dist_step.py's --out."""
    try:
        with open(path, encoding="utf-8") as f:
            result = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"compare_dist.py: {path}: {e}")
    return {r["rank"]: r["step_ms"]["mean"] for r in result.get("ranks", [])}, result


# (key, label, torch's key, mock's key, kind, tolerance): kind "ratio" compares mock / torch
# against 1 +- tolerance, "pp" mock - torch against +- tolerance points; tolerance None: no goal.
def rows_for(untraced):
    if untraced:
        return [
            ("step", "step (ms), untraced", "step_untraced", "step", "ratio", STEP_TOL),
            ("step_traced", "step (ms), traced", "step", "step_timed", "ratio", None),
        ]
    return [("step", "step (ms), traced", "step", "step", "ratio", STEP_TOL)]


COMMON_ROWS = [
    ("comm", "COMM busy (ms)", "comm", "comm", "ratio", COMM_TOL),
    ("overlap", "overlap (%)", "overlap", "overlap", "pp", OVERLAP_PP),
    ("exposed", "exposed comm (ms)", "exposed", "exposed", "ratio", None),
    ("comp", "COMP busy (ms)", "comp", "comp", "ratio", None),
]


def judge(t, m, kind, tol):
    """(ratio or difference, verdict) of one metric; verdict '' where there is no goal."""
    if t is None or m is None:
        return None, "n/a" if tol is not None else ""
    if kind == "pp":
        d = m - t
        return d, ("" if tol is None else "PASS" if abs(d) <= tol else "MISS")
    if t <= 0:
        return None, "n/a" if tol is not None else ""
    r = m / t
    return r, ("" if tol is None else "PASS" if abs(r - 1.0) <= tol else "MISS")


def compare(torch_vals, mock_vals, rows):
    out = {}
    for key, label, tkey, mkey, kind, tol in rows:
        t, m = torch_vals.get(tkey), mock_vals.get(mkey)
        value, verdict = judge(t, m, kind, tol)
        out[key] = {"label": label, "torch": t, "mock": m,
                    ("diff_pp" if kind == "pp" else "ratio"): value,
                    "goal": (None if tol is None else
                             f"within {tol:g} points" if kind == "pp" else f"within {tol:.0%}"),
                    "verdict": verdict}
    return out


def fmt(v, width, digits=2):
    return f"{'n/a':>{width}}" if v is None else f"{v:{width}.{digits}f}"


def print_table(title, result):
    print(title)
    print(f"  {'metric':22s} {'PyTorch':>10s} {'mock':>10s} {'mock/PT':>9s}  goal")
    for row in result.values():
        if "diff_pp" in row:
            d = row["diff_pp"]
            delta = f"{'n/a':>9s}" if d is None else f"{d:+7.2f}pp"
        else:
            delta = fmt(row["ratio"], 9, 3)
        goal = f"{row['verdict']} ({row['goal']})" if row["goal"] else ""
        print(f"  {row['label']:22s} {fmt(row['torch'], 10)} {fmt(row['mock'], 10)} {delta}  "
              f"{goal}")


def mean_over(ranks, key):
    vals = [v[key] for v in ranks.values() if v.get(key) is not None]
    return sum(vals) / len(vals) if vals else None


def collectives(report, steps):
    """Per collective: instances and bytes per step, and busbw weighted by instance time."""
    out = {}
    for c in report.get("collectives", []):
        name, count, p50 = c["collective"], c.get("count", 0), c.get("p50_time_ns", 0.0)
        e = out.setdefault(name, {"instances": 0, "bytes": 0, "time_ns": 0.0, "bus_ns": 0.0})
        e["instances"] += count
        e["bytes"] += count * c.get("bytes", 0)
        if c.get("busbw_gbps") is not None and p50 > 0:
            e["time_ns"] += count * p50
            e["bus_ns"] += count * p50 * c["busbw_gbps"]
    for e in out.values():
        e["per_step"] = e["instances"] / steps if steps else None
        e["bytes_per_step"] = e["bytes"] / steps if steps else None
        e["busbw_gbps"] = e["bus_ns"] / e["time_ns"] if e["time_ns"] > 0 else None
    return out


def megabytes(entry):
    b = entry.get("bytes_per_step")
    return None if b is None else b / 1e6


def ratio(a, b):
    return a / b if a is not None and b else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--torch", required=True, help="report JSON of the imported PyTorch traces")
    ap.add_argument("--mock", required=True, help="report JSON of the commprof run")
    ap.add_argument("--torch-steps", default="", help="torch_dist_step.py's --out")
    ap.add_argument("--mode", choices=["ddp", "fsdp", "tp", "megatron-tp"], default="",
                    help="default: fsdp where PyTorch's trace has reduce-scatters, else ddp")
    ap.add_argument("--label", default="")
    ap.add_argument("--json", default="")
    args = ap.parse_args()

    treport, mreport = load(args.torch), load(args.mock)
    tranks, mranks = per_rank(treport), per_rank(mreport)
    warnings = []
    for name, rep in (("PyTorch", treport), ("mock", mreport)):
        for p in rep.get("problems", []):
            warnings.append(f"{name} report: {p.get('file')}: {p.get('message')}")
        if rep.get("missing_ranks"):
            warnings.append(f"{name} report: missing ranks {rep['missing_ranks']}")
    if treport.get("world_size") != mreport.get("world_size"):
        warnings.append(f"world sizes differ: PyTorch {treport.get('world_size')}, mock "
                        f"{mreport.get('world_size')}")
    untraced, tresult = {}, {}
    if args.torch_steps:
        untraced, tresult = torch_untraced(args.torch_steps)
        for rank, ms in untraced.items():
            if rank in tranks:
                tranks[rank]["step_untraced"] = ms
    ranks = sorted(set(tranks) & set(mranks))
    if not ranks:
        sys.exit("compare_dist.py: the two reports share no rank")
    for rank in sorted(set(tranks) ^ set(mranks)):
        warnings.append(f"rank {rank} is in one report only")

    tcoll_names = {c["collective"] for c in treport.get("collectives", [])}
    mode = args.mode or ("fsdp" if "reducescatter" in tcoll_names else "ddp")
    rows = rows_for(bool(untraced)) + COMMON_ROWS

    label = args.label or tresult.get("preset", "")
    print(f"# {label}: PyTorch {mode.upper()} against commprof's {MOCK[mode]}, "
          f"{len(ranks)} rank(s)"
          + (f"; {tresult.get('device')}, torch {tresult.get('torch')}, NCCL "
             f"{tresult.get('nccl')}" if tresult else ""))
    print(f"# PyTorch: {args.torch} ({tranks[ranks[0]]['steps']} traced steps per rank"
          + (f", {len(tresult['ranks'][0]['step_ms']['all'])} untraced" if tresult.get("ranks")
             else "") + ")")
    print(f"# mock:    {args.mock} ({mranks[ranks[0]]['steps']} measured steps per rank, "
          f"{mranks[ranks[0]]['timed_steps']} with per-op timing)")
    for n in NOTES[mode]:
        print(f"# {n}")
    for w in warnings:
        print(f"# warning: {w}")

    out = {"label": label, "mode": mode, "torch_report": args.torch, "mock_report": args.mock,
           "torch_steps": args.torch_steps or None,
           "goals": {"step": f"within {STEP_TOL:.0%}", "comm_busy": f"within {COMM_TOL:.0%}",
                     "overlap": f"within {OVERLAP_PP:g} points"},
           "notes": NOTES[mode], "warnings": warnings, "ranks": {}}
    missed = []
    for rank in ranks:
        result = compare(tranks[rank], mranks[rank], rows)
        out["ranks"][str(rank)] = result
        print_table(f"## rank {rank}", result)
        missed += [f"rank {rank} {r['label']}" for r in result.values() if r["verdict"] != "PASS"
                   and r["goal"]]
    keys = {k for v in tranks.values() for k in v} | {k for v in mranks.values() for k in v}
    tmean = {k: mean_over({r: tranks[r] for r in ranks}, k) for k in keys}
    mmean = {k: mean_over({r: mranks[r] for r in ranks}, k) for k in keys}
    overall = compare(tmean, mmean, rows)
    out["overall"] = overall
    print_table("## overall (mean over ranks)", overall)
    missed += [f"overall {r['label']}" for r in overall.values() if r["verdict"] != "PASS"
               and r["goal"]]

    # Instances of one step: every measured step of an import carries ops; of the mock's, those
    # with per-op timing (sampled op timing records ops on some steps only).
    tsteps = min(v["timed_steps"] for v in tranks.values())
    msteps = min(v["timed_steps"] for v in mranks.values())
    tc, mc = collectives(treport, tsteps), collectives(mreport, msteps)
    grad = ["reducescatter", "allgather"] if mode == "fsdp" else ["allreduce"]
    print("## collectives across ranks (per step; busbw: bus bytes / time of the matched "
          "instances)")
    print(f"  {'collective':26s} {'PT n':>6s} {'mock n':>6s} {'PT MB':>9s} {'mock MB':>9s} "
          f"{'PT busbw':>9s} {'mock busbw':>10s} {'mock/PT':>8s}")
    out["collectives"] = {}
    for name in grad + sorted((set(tc) | set(mc)) - set(grad)):
        t, m = tc.get(name, {}), mc.get(name, {})
        if not t and not m:
            continue
        role = ROLES[mode].get(name, "other")
        r = ratio(m.get("busbw_gbps"), t.get("busbw_gbps"))
        out["collectives"][name] = {"role": role, "torch": t or None, "mock": m or None,
                                    "busbw_ratio": r}
        print(f"  {name + ' (' + role + ')':26s} {fmt(t.get('per_step'), 6, 1)} "
              f"{fmt(m.get('per_step'), 6, 1)} {fmt(megabytes(t), 9, 1)} "
              f"{fmt(megabytes(m), 9, 1)} "
              f"{fmt(t.get('busbw_gbps'), 9, 1)} {fmt(m.get('busbw_gbps'), 10, 1)} "
              f"{fmt(r, 8, 3)}")

    out["pass"] = not missed
    out["missed"] = missed
    print(f"# goals (step and COMM busy within {STEP_TOL:.0%}, overlap within {OVERLAP_PP:g} "
          f"points): " + ("PASS on every rank and overall" if not missed else
                          "MISS: " + "; ".join(missed)))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
