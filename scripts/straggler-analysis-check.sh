#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `commprof whatif --ideal` against the published answers of the OSDI'25 straggler what-if paper
# (Lin et al., "Understanding Stragglers in Large Model Training Using What-if Analysis"; its
# artifact, the public repository ByteDance-Seed/StragglerAnalysis, Apache-2.0, checked at commit
# 8efcd7f). For each trace (AR, SE, ST) it reads data/timeline-T.json.gz, runs whatif --ideal and
# compares S, the stage and op-kind attributions (and the data-parallel ones) with
# data/result-T.json, failing when any S, stage or op kind is more than 1% off. CI checks ST alone
# (tests/data/straggler-analysis: AR and SE are 2.4 MB each); this covers the two large ones.
#
#   scripts/straggler-analysis-check.sh REPO [TRACES]
#   e.g. git clone https://github.com/ByteDance-Seed/StragglerAnalysis sa &&
#        BUILD=build/host scripts/straggler-analysis-check.sh sa "AR SE ST"
#
# REPO: a clone (a work tree, or a bare repository: files are read with git show HEAD:...).
# Takes about 5 s per large trace on one core.
set -euo pipefail
repo=${1:?usage: $0 REPO [TRACES]}
traces=${2:-AR SE ST}
build=${BUILD:-build/host}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fetch() {  # fetch PATH DEST: a file of the repository, from its work tree or its HEAD
  if [ -f "$repo/$1" ]; then cp "$repo/$1" "$2"; else git -C "$repo" show "HEAD:$1" >"$2"; fi
}
status=0
for t in $traces; do
  fetch "data/timeline-$t.json.gz" "$work/timeline-$t.json.gz"
  fetch "data/result-$t.json" "$work/result-$t.json"
  "$build/commprof" whatif --ideal "$work/timeline-$t.json.gz" --format json -o "$work/ours-$t.json"
  python3 - "$t" "$work/ours-$t.json" "$work/result-$t.json" <<'PY' || status=1
import json, sys
trace, ours, theirs = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
got = {(a["dimension"], a["key"]): a["slowdown"] for a in ours["attribution"]}
rows = [("S", "", ours["slowdown"], theirs["blocking_slowdown"], True)]
for dim, key in (("stage", "blocking_decompose_by_stage"), ("op_kind", "blocking_decompose_by_optype"),
                 ("dp_rank", "blocking_decompose_by_dp_rank")):
    for k, v in theirs[key].items():
        rows.append((dim, k, got.get((dim, k), float("nan")), v, dim != "dp_rank"))
worst, worst_gated = 0.0, 0.0
print(f"# {trace}: what              ours   published   off(%)")
for dim, key, a, b, gated in rows:
    off = abs(a / b - 1) * 100
    worst = max(worst, off)
    if gated:
        worst_gated = max(worst_gated, off)
    if dim != "dp_rank" or off > 0.5:
        print(f"  {dim:8} {key:28} {a:8.4f} {b:8.4f} {off:8.3f}")
print(f"# {trace}: largest difference {worst:.3f}% (S, stages, op kinds: {worst_gated:.3f}%)")
sys.exit(0 if worst_gated <= 1.0 else 1)
PY
done
exit $status
