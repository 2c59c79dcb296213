#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU figures of docs/BENCHMARKS.md on a host with NVIDIA GPUs, one phase at a time:
#
#   scripts/gpu-bench.sh PHASE...        e.g. scripts/gpu-bench.sh tests sweep anchors
#
# Phases (run in the order given; each writes under $OUT/<phase>/, emptied first):
#   tests      the GPU-labelled tests: `ctest --test-dir $BUILD -L gpu` where $BUILD's CTest files
#              were configured in this checkout, else the GPU test binaries
#              ($BUILD/tests/commprof_cuda*_tests) under mpirun on 1 and NP ranks; both with
#              COMMPROF_REQUIRE_GPU=1 (a skip fails); the log names every test that did not run
#   sweep      commprof bench, all ops, 1 MiB..1 GiB by 4, 20 iterations after 5 (as the nccl-tests
#              anchors): plain (sweep/bench) and with --graph (sweep/graph); the GEMM probe
#              (commprof gemm, bfloat16 and float)
#   anchors    the sweep's bench.json against the nccl-tests anchors (scripts/compare-anchors.py,
#              $ANCHORS, default docs/anchors/h200x2-nccl-tests-2.19.6); with NCCL_TESTS=DIR
#              (all_reduce_perf, all_gather_perf, sendrecv_perf, ...) also ROUNDS (default 2)
#              rounds of nccl-tests and commprof bench alternately on the same GPUs for each op of
#              ROUND_OPS (default "sendrecv allreduce allgather"), each pair compared; alltoallv
#              runs with uniform routing over one expert per rank (equal, aligned blocks) against
#              alltoall_perf, then once with the default (Zipf) routing of 64 experts, top-6, bf16
#              tokens of 4096, for its busbw and imbalance
#   workloads  commprof run, gpt-1.3b, 10 steps after 3: dp (overlapped and --no-overlap, each
#              also with --op-timing step; --op-timing shared), tp (and --sequence-parallel), pp
#              (1f1b, gpipe), dp --dp-mode zero, dp --offload; the reducer on dp and dp-serial
#   stages     pipeline stage balance with the model's ends (issue #29): llama-1b (16 layers,
#              vocabulary 128,256, tied), pp NP, 8 micro-batches, 10 steps after 3: without ends
#              (--vocab 0), with them (1f1b), with --account-for-embedding --account-for-loss where
#              the layers then divide, with STAGES_PP_LAYERS (default 10,6 on 2 ranks: the LM head
#              and loss weigh about four layers), and interleaved (--virtual-stages 2); each
#              report's pipeline-stage table (busy time, bubble) in the log
#   moe        mixtures of experts on NP >= 2 GPUs (issue #30): mixtral-8x7b (MOE_LAYERS, default 2)
#              and deepseek-v3-gqa (4 layers: 3 dense, 1 MoE) with --workload dp --ep NP, 10 steps
#              after 3, the default (Zipf) routing and uniform; each run's report (dispatch and
#              combine all-to-allvs over EP, the routing counts, expert-DP gradients) in the log;
#              then PyTorch replays the Zipf Mixtral run's all-to-allvs with the same bytes per
#              peer (scripts/torch/alltoall_replay.py under torchrun): each instance's time beside
#              the run's, by CUDA events around the call and by NCCL's kernel record (EP_REPLAY=0
#              skips it)
#   cp         context parallelism on NP >= 2 GPUs (issue #30): llama-1b, 4 layers, --cp NP with each
#              --cp-mode (p2p, a2a, allgather), 10 steps after 3; each report's groups in the log
#   timing     what op timing costs: gpt-1.3b dp jobs with --op-timing step / activity / pair /
#              shared interleaved, two passes; tp and pp 1f1b with step / activity / pair, twice;
#              bench --instrument both (per-call events + NVTX) and activity-both (CUPTI records)
#   nsys       Nsight Systems (scripts/lib/nsys.sh finds it): tiny dp and tp jobs with every rank
#              under scripts/nsys-profile-rank.sh, imported (commprof import-nsys) and checked
#              against the job's own rank files (scripts/compare-nsys-import.py); a tiny dp job
#              recorded whole (the test data of tests/data/nsys-dp-tiny-2xh200); the gpt-1.3b dp
#              job under nsys (op timing falls back to events) imported, reported and run through
#              `nsys recipe nccl_gpu_overlap_trace`, and refusing --op-timing activity (exit 2);
#              a step-timed dp job under nsys between two activity-timed jobs, compared
#              (scripts/compare-reports.py), with the recipe's wall time against import-nsys'
#   fidelity   commprof's mock step against PyTorch's real step of the same shapes on one GPU
#              (issues #15, #29): for each preset of FIDELITY_PRESETS (default "gpt-1.3b gpt-7b
#              llama-1b llama-8b"; layers from FIDELITY_LAYERS, default 24, 8, 16, 4, the same
#              for both tools), with the model's ends and without (FIDELITY_ENDS, default "with
#              without": --vocab 0 on both sides), FIDELITY_TORCH_ROUNDS (3) processes of
#              scripts/fidelity/torch_step.py then `commprof run --workload dp --op-timing
#              activity` on 1 rank with each --attention of FIDELITY_ATTENTION (default "fused
#              gemm"), each compared by scripts/fidelity/compare.py; first GEMM_ROUNDS (3) pairs of
#              `commprof gemm` and torch's 8192^3 matmul of randn (and ones) operands, alternately;
#              FIDELITY_RUN_ARGS go to commprof run (for the MoE presets "--routing uniform":
#              the PyTorch reference's random router spreads tokens about evenly);
#              FIDELITY_BASELINE (a build folder) runs its commprof too against the same PyTorch
#              step (before/after on one GPU); each comparison's memory-bound kernels and ops one
#              by one in <tag>-other-<attention>.txt (scripts/fidelity/other_kernels.py).
#              Needs python3 with torch (PYTHON, default python3)
#   calibrate  `commprof run --compute-from` against the traced step it learned from (issue #15):
#              for each preset of CALIBRATE_PRESETS (default "gpt-1.3b llama-8b"; layers from
#              CALIBRATE_LAYERS, default "24 4"), torch_step.py under nsys (-t cuda,nvtx; each
#              timed step is an NVTX range "step N"), imported with --step-range "step ", then
#              `commprof run` of the same shapes calibrated from it, twice: the traced gaps
#              replayed as idle time (the default) and left out (--no-host-gaps); each compared
#              by scripts/fidelity/calibration.py, each side's kernel time from its own rank files
#   torchtrace PyTorch profiler traces of a small DDP job (scripts/torch/ddp_trace.py): one rank
#              on NCCL and the GPU, two ranks on gloo and the CPUs, and two on NCCL where the
#              host has two GPUs (import-torch's test data)
#   sampling   sampled op timing (issues #17, #33): gpt-1.3b, 20 measured steps, for each workload of
#              SAMPLING_WORKLOADS (default "dp"; also tp, pp (1f1b) and hybrid (tp 2 x pp 2 on 4
#              ranks, x dp 2 on 8)): --op-timing step, sampled (the default) and activity, each a
#              fresh job, three rounds interleaved; then bench allreduce with and without records
#   plugin     the NCCL profiler plugin (PLUGIN, default $BUILD/src/nccl_profiler/
#              libnccl-profiler-commprof.so) on NP >= 2 ranks: nccl-tests (NCCL_TESTS) all_reduce,
#              all_gather and sendrecv (PLUGIN_OPS) without and with it, ROUNDS (2) interleaved;
#              commprof report of its files against nccl-tests' own busbw and the cost
#              (scripts/compare-plugin.py); with PLUGIN_EVENTS="calls none" (or either), rounds
#              of the plugin asking NCCL for less (COMMPROF_PLUGIN_EVENTS) beside them, their
#              cost against the same plain rounds: what NCCL's delivery of the events costs apart
#              from the plugin's work; then commprof run and a PyTorch DDP job under it, each
#              with the calls that do not match across ranks (scripts/plugin-mismatches.py)
#   plugincost the plugin's cost by size (issue #46) on NP >= 2 ranks: nccl-tests' all_reduce_perf
#              and all_gather_perf (PLUGINCOST_OPS) PLUGINCOST_MIN (1M)..PLUGINCOST_MAX (1G) by
#              4, PLUGINCOST_ITERS (512) iterations, off and each of PLUGINCOST_MODES ("sampled
#              full"; also: once, calls, none): sampled COMMPROF_PLUGIN_SAMPLE=PLUGIN_SAMPLE
#              (default 128), full =1, once =2^40 (the first call alone timed), calls and none
#              COMMPROF_PLUGIN_EVENTS=calls / none, nullcalls and nullcoll the null plugin
#              (NULL_PLUGIN) asking for calls' mask or Coll and P2p alone (NCCL's delivery of the
#              events by itself); ROUNDS (2) interleaved (each round starting one mode later),
#              fresh jobs; per mode
#              scripts/nccl-tests-cost.py (each run's time, the medians' cost), and for sampled
#              and full scripts/compare-plugin.py: the timed calls' busbw against nccl-tests'
#              (kernel time, and back to back: tests/tools/back_to_back_check.py on each round's
#              report, b2b busbw per placement against nccl-tests' loop of it); the report's
#              timed-calls and drop lines
#   pluginsteps  a PyTorch job of PLUGIN_STEPS (12) known steps on NP (2) GPUs under the plugin,
#              for each mode of PLUGIN_STEPS_MODES ("ddp fsdp": DDP, or FSDP2 fully_shard)
#              (scripts/torch/ddp_steps.py, each step timed by the job with CUDA events): the
#              capture (pluginsteps/<mode>/capture/rank-<R>.json), the job's own step times
#              (pluginsteps/<mode>/job/steps-<R>.json) and commprof report's text and JSON of the
#              capture, whose per-rank steps_from says how the steps were found; test data for the
#              plugin's step detection (issue #46). PLUGIN_STEPS_SAMPLE (default 1: every call
#              timed) lists the sample periods K to run each mode with (COMMPROF_PLUGIN_SAMPLE);
#              K > 1 goes to <mode>-k<K>/
#   hangdumps  a 2-GPU NCCL job with a planted fault (scripts/torch/fr_hang.py), once per fault of
#              HANG_FAULTS ("skip count": a rank never issues an all-reduce; a rank issues it with
#              half the elements): PyTorch's Flight Recorder dumps (pickle and JSON, taken by the
#              job; pickle, by the watchdog on timeout; TORCH_NCCL_ENABLE_TIMING=1, so a started
#              collective is told from a scheduled one) and NCCL RAS's status (JSON and text), in
#              hangdumps/<fault>/ with meta.json naming the fault: test data for commprof
#              diagnose (issue #47)
#   livehang   a hang seen live (issue #47) on 2 GPUs: for each fault of LIVEHANG_FAULTS ("skip graph":
#              a rank never issues an all-reduce; a rank skips a CUDA graph's replay of its
#              all-reduces) scripts/torch/fr_hang.py under the plugin (every call timed, its
#              files rewritten every LIVEHANG_FLUSH_S, default 1 s) with `commprof diagnose
#              --watch --interval 0.5` on the capture as it runs: livehang/<fault>/watch.txt (each
#              line stamped with the wall clock) and how long after the fault was planted the
#              first stall was said; then diagnose of the capture and of the Flight Recorder's dumps
#   a2agap     the expert-parallel all-to-allv gap of issue #48 item 6 on NP >= 2 GPUs: a Zipf-routed
#              mixtral-8x7b EP run (MOE_LAYERS, 2) and PyTorch's replay of its all-to-allvs
#              (scripts/torch/alltoall_replay.py: CUDA events around each call and the profiler's
#              NCCL kernel), once on the host's NCCL and once on PyTorch's bundled one (the run
#              with LD_LIBRARY_PATH at torch's nvidia/nccl/lib), so both sides share one NCCL:
#              a2agap/<nccl>/ and the ratios in the log
#   mergepair  one PyTorch DDP job on NP (2) GPUs both under the plugin and traced by the PyTorch
#              profiler (scripts/torch/ddp_trace.py): the capture (mergepair/capture/) and the
#              traces (mergepair/trace/rank-<R>.pt.trace.json.gz) of the same steps, test data
#              for `commprof report PLUGIN_DIR TRACE_DIR` (issue #46)
#   mergensys  nsys as the trace side of `commprof report PLUGIN_DIR TRACE_DIR` (issue #46): a PyTorch
#              DDP job (scripts/torch/ddp_steps.py, MERGENSYS_STEPS (8) steps, each an NVTX range
#              "step N") on NP ranks under mpirun, each rank under scripts/nsys-profile-rank.sh
#              (--capture all, cuda and nvtx) and the plugin: the recordings as SQLite
#              (mergensys/nsys/*.sqlite.xz), imported (--step-range "step ", the first step
#              warm-up), and reported merged with the capture (report-merged.txt, merged/)
#   dist       PyTorch's data- or tensor-parallel step against the mock's on NP >= 2 GPUs (issue
#              #33): for each preset of DIST_PRESETS (default "gpt-1.3b llama-1b"; layers from
#              DIST_LAYERS, default "24 16": the whole presets with their ends, which under DDP on 2
#              H100 peaked at 19 and 25 GiB per rank) and each mode of DIST_MODES (default "ddp
#              fsdp"; also tp and megatron-tp), scripts/fidelity/torch_dist_step.py under
#              torchrun on NP ranks (DDP, bucket_cap_mb 25, or FSDP2 full shard, or tensor
#              parallelism over the NP ranks without the model's ends, through DTensor or written
#              out as Megatron-LM does it; 10 steps timed with CUDA events after 3, then 5
#              steps traced with torch.profiler), its traces through `commprof import-torch` and
#              `report`; then `commprof run --workload dp` (ddp), `--workload dp --dp-mode zero`
#              (fsdp) or `--workload tp --vocab 0` (both tp modes) of the same shapes, 10 steps
#              after 3, and its report; both compared by scripts/fidelity/compare_dist.py (step,
#              COMM busy, overlap, exposed communication, busbw; PASS/MISS against the goals).
#              Needs python3 with torch (PYTHON)
#   estimate   NCCL's own estimate against the measured time (issues #31, #33): bench --estimate of
#              allreduce, allgather, reducescatter, broadcast and reduce, 8 B..1 GiB by 4, on NP
#              ranks: per size ncclGroupSimulateEnd's time of one call beside the measured mean
#   whatif     `commprof whatif` against the runs it predicts (issue #31) on NP >= 2 GPUs:
#              scripts/whatif-bench.sh on the cuda backend with WHATIF_WORKLOADS (default "dp tp
#              pp", with hybrid from 4 ranks) of gpt-1.3b (WHATIF_LAYERS, default 8), the last
#              rank's compute slowed x1.5 and --no-overlap, each predicted from the plain run
#   astra      a measured step through ASTRA-sim (issues #31 item 6, #48 item 3; ASTRA_SIM, the path
#              of its analytical binary AstraSim_Analytical_Congestion_Unaware, default
#              $BUILD/astra/AstraSim_Analytical_Congestion_Unaware where that exists; built as
#              scripts/astra-sim-build.md says): gpt-1.3b (ASTRA_LAYERS, default 8 layers), 5
#              steps after 2: dp NP, tp NP, pp NP (1f1b), dp NP with ZeRO (--dp-mode zero) and,
#              from 4 ranks, tp 2 x pp 2 (1f1b); mixtral-8x7b (MOE_LAYERS, default 2) dp NP with
#              --ep NP; each run's timed step exported and simulated by
#              scripts/astra-sim-check.sh: ASTRA-sim's step per rank beside the measured step and
#              commprof's own serialised replay
#   probe      what run's link probe costs (issue #45): the gpt-1.3b dp job (10 steps after 3) and
#              the default run (`run --backend cuda`) on NP ranks with and without --no-link-probe,
#              PROBE_ROUNDS (3) rounds interleaved; each run's wall time (s) and the probe's own
#              line (its time per collective kind), then
#              `commprof project --sweep 2*NP` of a probed run (every feasible layout ranked)
#   lmhead     the LM head's three GEMMs against PyTorch's with the vocabulary padded to 128 and
#              unpadded (issue #45; --make-vocab-size-divisible-by 128 and 1): gpt-1.3b (hidden
#              2048, seq 2048, vocabulary 50,257) on one GPU, commprof run
#              with 1 layer and --op-timing activity for each divisor, scripts/fidelity/lm_head.py
#              timing PyTorch's F.linear forward and backward GEMMs and reading commprof's head ops
#   multi      NP=4 or NP=8 (required): bench allreduce, allgather, reducescatter on NP ranks,
#              then gpt-1.3b workloads with their reports: NP=4: dp4, tp2 x dp2, tp2 x pp2 (1f1b),
#              pp4 (1f1b, gpipe); NP=8: tp2 x pp2 x dp2, tp8, dp8, pp8 (1f1b, gpipe)
#
# Environment: OUT (default ./gpu-out), BUILD (a `cmake --preset cuda` build, default build/cuda),
# NP (ranks, default 2, one per GPU), COMMIT (commit named in the log where the tree has no .git),
# NSYS, NSYS_IMPORTER, NSYS_LIBDIR (scripts/lib/nsys.sh), ANCHORS, NCCL_TESTS, ROUNDS, ROUND_OPS, ASTRA_SIM,
# PACK=1 (at the end, each phase's folder becomes $OUT/<phase>.tar.xz: fewer files to copy off).
# Every rank runs with NCCL_NVLS_ENABLE=0 (NVLink multicast off). The log is $OUT/gpu-bench.log.
# A command that fails is logged with its exit status and the phase goes on; the next phase runs
# regardless. Exit status: 0 if every phase passed, 1 if any failed, 2 for a bad phase name.
# shellcheck source-path=SCRIPTDIR disable=SC2317  # the phase_* functions are called by name
set -uo pipefail

PHASES=(tests sweep anchors workloads stages moe cp timing sampling nsys fidelity calibrate torchtrace plugin plugincost pluginsteps hangdumps livehang mergepair mergensys a2agap dist estimate
  whatif astra probe lmhead multi)
usage() {
  echo "usage: scripts/gpu-bench.sh PHASE...   (PHASE: ${PHASES[*]}; see the comment at the top)" >&2
}
[ $# -gt 0 ] || { usage; exit 2; }
for p in "$@"; do
  case " ${PHASES[*]} " in
    *" $p "*) ;;
    *) echo "gpu-bench.sh: unknown phase '$p'" >&2; usage; exit 2 ;;
  esac
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/common.sh
source "$here/lib/common.sh"
# shellcheck source=lib/nsys.sh
source "$here/lib/nsys.sh"

# Paths given by the caller, relative to where it was called from (common.sh moved to the root).
for v in ANCHORS NCCL_TESTS NSYS_LIBDIR NSYS_IMPORTER ASTRA_SIM; do
  [ -n "${!v:-}" ] && printf -v "$v" '%s' "$(abs_path "${!v}")"
done
case ${NSYS:-} in */*) NSYS=$(abs_path "$NSYS") ;; esac

SWEEP=(-b 1M -e 1G -f 4 -n 20 -w 5)
# commprof run as in every gpt-1.3b figure; add --workload and the rest.
RUN13=("$COMMPROF" run --backend cuda --model gpt-1.3b --steps 10 --warmup-steps 3)
PD=  # the running phase's folder

# step_line FILE: rank 0's step-time summary line of a commprof run, if any.
step_line() { grep -E '^  step time \(ms\)' "$1" 2>/dev/null | head -n 1 | sed 's/^ *//'; }

# need_commprof: 0 if $COMMPROF can run, else says why and fails the phase.
need_commprof() {
  [ -x "$COMMPROF" ] && return 0
  say "FAILED: no $COMMPROF (build with \`cmake --preset cuda && cmake --build --preset cuda\`, or set BUILD)"
  PHASE_RC=1
  return 1
}

# need_plugin PHASE: sets the caller's `plugin` to the NCCL profiler plugin (PLUGIN, default the
# build's) as an absolute path; where there is none, says so and fails the phase.
need_plugin() {
  plugin=${PLUGIN:-$BUILD/src/nccl_profiler/libnccl-profiler-commprof.so}
  if [ ! -f "$plugin" ]; then
    say "FAILED: the $1 phase needs the plugin ($plugin)"
    PHASE_RC=1
    return 1
  fi
  plugin=$(abs_path "$plugin")
}

# need_torch_gpus PHASE N: 0 if python3 (PYTHON) has a torch that sees N GPUs, else says so and
# fails the phase.
need_torch_gpus() {
  "${PYTHON:-python3}" -c "import torch, sys; sys.exit(torch.cuda.device_count() < $2)" \
    >>"$LOG" 2>&1 && return 0
  say "FAILED: the $1 phase needs a torch that sees $2 GPUs"
  PHASE_RC=1
  return 1
}

# report_runs NAME...: `commprof report` of each run folder $PD/NAME into NAME.report.txt and
# NAME.report.json; the per-rank table goes to the log.
report_runs() {
  local d
  for d in "$@"; do
    run_to "report $d" "$PD/$d.report.txt" "$COMMPROF" report "$PD/$d" || continue
    "$COMMPROF" report "$PD/$d" --format json -o "$PD/$d.report.json" >>"$LOG" 2>&1
    sed -n '/## Per rank/,/^$/p' "$PD/$d.report.txt" >>"$LOG"
  done
}

# ---------------------------------------------------------------------------------------------
phase_tests() {
  local src='' bld='' bin np
  if [ -f "$BUILD/CTestTestfile.cmake" ] && command -v ctest >/dev/null; then
    src=$(sed -n 's/^# Source directory: //p' "$BUILD/CTestTestfile.cmake")
    bld=$(sed -n 's/^# Build directory: //p' "$BUILD/CTestTestfile.cmake")
    if [ "$(readlink -f "$src")" = "$(readlink -f "$COMMPROF_ROOT")" ] &&
      [ "$(readlink -f "$bld")" = "$(readlink -f "$BUILD")" ]; then
      run_to "ctest -L gpu" "$PD/ctest-gpu.txt" env COMMPROF_REQUIRE_GPU=1 \
        ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 180
      say "  $(grep -E 'tests passed|tests failed' "$PD/ctest-gpu.txt")"
      # CTest counts a skip among the passed; name each one (its list after "did not run").
      local skipped
      skipped=$(sed -n '/The following tests did not run:/,/^$/p' "$PD/ctest-gpu.txt" |
        sed -n 's/^[[:space:]]*[0-9]* - \(.*\)$/\1/p')
      if [ -n "$skipped" ]; then
        say "  did not run: $(printf '%s\n' "$skipped" | paste -sd ',' - | sed 's/,/, /g')"
      else
        say "  did not run: none"
      fi
      grep -E "Test +#|Passed|Failed|Skipped" "$PD/ctest-gpu.txt" >>"$LOG"
      return
    fi
    say "CTest files of $BUILD were written for $src (build $bld), not this checkout:" \
      "running the GPU test binaries instead"
  fi
  local found=0 nps=(1)
  [ "$NP" = 1 ] || nps+=("$NP")
  # The cuda backend's own tests, and the backend contract run on cuda (COMMPROF_TEST_BACKEND).
  for bin in $(find "$BUILD/tests" -type f \( -name 'commprof_cuda*_tests' \
                 -o -name 'commprof_backend_conformance_mpi_tests' \) 2>/dev/null | sort); do
    [ -x "$bin" ] || continue
    found=1
    for np in "${nps[@]}"; do
      run_to "$(basename "$bin") on $np rank(s)" "$PD/$(basename "$bin")-np$np.txt" \
        env COMMPROF_REQUIRE_GPU=1 COMMPROF_TEST_BACKEND=cuda "${MPIRUN_BASE[@]}" \
        -x COMMPROF_REQUIRE_GPU -x COMMPROF_TEST_BACKEND -np "$np" "$bin"
    done
  done
  if [ "$found" = 0 ]; then
    say "FAILED: neither CTest files nor GPU test binaries under $BUILD (cmake --preset cuda)"
    PHASE_RC=1
  fi
}

# ---------------------------------------------------------------------------------------------
phase_sweep() {
  need_commprof || return
  local dt
  run_to "bench, all ops ${SWEEP[*]}" "$PD/bench.txt" \
    "${MPIRUN[@]}" "$COMMPROF" bench --backend cuda --ops all "${SWEEP[@]}" --out "$PD/bench"
  run_to "bench --graph, all ops ${SWEEP[*]}" "$PD/graph.txt" \
    "${MPIRUN[@]}" "$COMMPROF" bench --backend cuda --ops all "${SWEEP[@]}" --graph --out "$PD/graph"
  for dt in bfloat16 float; do
    run_to "gemm probe $dt (8192^3)" "$PD/gemm-$dt.txt" \
      "${MPIRUN[@]}" "$COMMPROF" gemm --backend cuda --dtype "$dt"
    cat "$PD/gemm-$dt.txt" >>"$LOG"
  done
}

# ---------------------------------------------------------------------------------------------
phase_anchors() {
  local anchors=${ANCHORS:-$COMMPROF_ROOT/docs/anchors/h200x2-nccl-tests-2.19.6}
  local bench=$OUT/sweep/bench/bench.json
  if [ ! -d "$anchors" ]; then
    say "FAILED: no anchors folder $anchors (set ANCHORS)"
    PHASE_RC=1
  elif [ ! -f "$bench" ]; then
    say "FAILED: no $bench: run the sweep phase first (scripts/gpu-bench.sh sweep anchors)"
    PHASE_RC=1
  else
    run_to "sweep against $anchors (2% at >= 64 MiB)" "$PD/sweep-vs-anchors.txt" \
      python3 scripts/compare-anchors.py "$bench" "$anchors"
    say "  $(tail -n 1 "$PD/sweep-vs-anchors.txt")"
    cat "$PD/sweep-vs-anchors.txt" >>"$LOG"
  fi

  if [ -z "${NCCL_TESTS:-}" ]; then
    say "NCCL_TESTS not set: no rounds of nccl-tests beside commprof"
    return
  fi
  need_commprof || return
  # alltoallv with uniform routing (every pair the same count) is compared with alltoall_perf.
  local -A nt_name=([allreduce]=all_reduce [allgather]=all_gather [reducescatter]=reduce_scatter
    [alltoall]=alltoall [alltoallv]=alltoall [broadcast]=broadcast [reduce]=reduce [sendrecv]=sendrecv)
  local round op nt ok routing
  for round in $(seq 1 "${ROUNDS:-2}"); do
    mkdir -p "$PD/nccl-tests-$round"
    for op in ${ROUND_OPS:-sendrecv allreduce allgather}; do
      nt=$NCCL_TESTS/${nt_name[$op]:-$op}_perf
      ok=1
      if [ ! -x "$nt" ]; then
        say "round $round nccl-tests $op: FAILED: no $nt"
        PHASE_RC=1
        ok=0
      else
        run_to "round $round nccl-tests $op" "$PD/nccl-tests-$round-$op.txt" \
          "${MPIRUN[@]}" "$nt" "${SWEEP[@]}" -c 1 -J "$PD/nccl-tests-$round/${nt_name[$op]:-$op}.json" || ok=0
      fi
      # alltoallv as alltoall_perf runs it: one expert per rank, each token to one, 32 floats a
      # token, so every peer's block is size/NP bytes at an aligned offset.
      routing=()
      [ "$op" = alltoallv ] && routing=(--routing uniform --experts "$NP" --top-k 1 --hidden 32)
      run_to "round $round commprof $op" "$PD/commprof-$round-$op.txt" \
        "${MPIRUN[@]}" "$COMMPROF" bench --backend cuda --ops "$op" "${routing[@]}" "${SWEEP[@]}" \
        --out "$PD/commprof-$round-$op" || ok=0
      [ "$ok" = 1 ] || continue
      run_to "round $round $op: commprof against nccl-tests" "$PD/compare-$round-$op.txt" \
        python3 scripts/compare-anchors.py "$PD/commprof-$round-$op/bench.json" "$PD/nccl-tests-$round"
      cat "$PD/compare-$round-$op.txt" >>"$LOG"
    done
  done
  # A routed alltoallv (the default Zipf routing, tokens of 4096 bf16 elements: an MoE dispatch
  # of hidden size 4096), for its busbw and imbalance beside the uniform one.
  case " ${ROUND_OPS:-} " in
    *" alltoallv "*)
      run_to "commprof alltoallv, default routing" "$PD/commprof-alltoallv-zipf.txt" \
        "${MPIRUN[@]}" "$COMMPROF" bench --backend cuda --ops alltoallv --dtype bfloat16 \
        --hidden 4096 "${SWEEP[@]}" --out "$PD/commprof-alltoallv-zipf"
      grep -vE "^#? *$" "$PD/commprof-alltoallv-zipf.txt" | tail -n 12 >>"$LOG"
      ;;
  esac
}

# ---------------------------------------------------------------------------------------------
# wl NAME ARGS...: one gpt-1.3b job on NP ranks, its output in $PD/NAME.txt.
wl() {
  local name=$1
  shift
  run_to "$name: run $*" "$PD/$name.txt" "${MPIRUN[@]}" "${RUN13[@]}" "$@"
  local s
  s=$(step_line "$PD/$name.txt")
  [ -z "$s" ] || say "  $s"
}

phase_workloads() {
  need_commprof || return
  wl dp --workload dp --out "$PD/dp"
  wl dp-serial --workload dp --no-overlap --out "$PD/dp-serial"
  wl dp-step --workload dp --op-timing step
  wl dp-serial-step --workload dp --no-overlap --op-timing step
  wl dp-shared --workload dp --op-timing shared
  wl tp --workload tp
  wl tp-sp --workload tp --sequence-parallel
  wl pp-1f1b --workload pp --schedule 1f1b
  wl pp-gpipe --workload pp --schedule gpipe
  wl zero --workload dp --dp-mode zero
  wl offload --workload dp --offload
  # The reducer on the two dp runs (docs/BENCHMARKS.md, "What the reducer says about the dp step").
  run_to "report dp" "$PD/dp.report.txt" "$COMMPROF" report "$PD/dp"
  run_to "report dp --baseline dp-serial" "$PD/dp-vs-serial.report.txt" \
    "$COMMPROF" report "$PD/dp" --baseline "$PD/dp-serial"
}

# ---------------------------------------------------------------------------------------------
phase_timing() {
  need_commprof || return
  local pass t w i out_args
  say "op timing cost, gpt-1.3b dp: step / activity / pair / shared, each a fresh job, two passes"
  for pass in 1 2; do
    for t in step activity pair shared; do
      out_args=()
      [ "$pass" = 1 ] && [ "$t" != step ] && out_args=(--out "$PD/dp-$t")
      wl "dp-$t-$pass" --workload dp --op-timing "$t" "${out_args[@]}"
      grep -E "op timing|busy|warn|error" "$PD/dp-$t-$pass.txt" >>"$LOG"
    done
  done
  say "op timing cost on collective-heavy steps: tp and pp (1f1b), step / activity / pair, twice"
  for w in tp pp; do
    i=0
    for t in step activity pair step activity pair; do
      i=$((i + 1))
      if [ "$w" = tp ]; then
        wl "tp-$i-$t" --workload tp --op-timing "$t"
      else
        wl "pp-1f1b-$i-$t" --workload pp --schedule 1f1b --op-timing "$t"
      fi
    done
  done
  grep -hE "ops per step|COMM busy" "$PD"/tp-*.txt "$PD"/pp-1f1b-*.txt >>"$LOG" 2>/dev/null
  report_runs dp-activity dp-pair dp-shared

  say "bench: per-call events + NVTX against none, interleaved (--instrument both)"
  run_to "bench --instrument both" "$PD/instrument-both.txt" \
    "${MPIRUN[@]}" "$COMMPROF" bench --backend cuda --ops allreduce,allgather,sendrecv "${SWEEP[@]}" \
    --instrument both --out "$PD/instrument-both"
  say "bench: per-call CUPTI activity records + NVTX against none, interleaved (--instrument activity-both)"
  run_to "bench --instrument activity-both" "$PD/instrument-activity-both.txt" \
    "${MPIRUN[@]}" "$COMMPROF" bench --backend cuda \
    --ops allreduce,allgather,reducescatter,alltoall,broadcast,sendrecv "${SWEEP[@]}" \
    --instrument activity-both --out "$PD/instrument-activity-both"
}

# ---------------------------------------------------------------------------------------------
phase_sampling() {
  need_commprof || return
  local r t w
  local -a args
  for w in ${SAMPLING_WORKLOADS:-dp}; do
    case $w in
      dp | tp) args=(--workload "$w") ;;
      pp) args=(--workload pp --schedule 1f1b) ;;
      hybrid)
        case $NP in
          4) args=(--workload hybrid --tp 2 --pp 2 --schedule 1f1b) ;;
          8) args=(--workload hybrid --tp 2 --pp 2 --dp 2 --schedule 1f1b) ;;
          *) say "sampling hybrid: FAILED: needs NP=4 or 8, not $NP"; PHASE_RC=1; continue ;;
        esac ;;
      *) say "sampling: FAILED: unknown workload '$w' (dp, tp, pp, hybrid)"; PHASE_RC=1; continue ;;
    esac
    say "sampled op timing, gpt-1.3b $w on $NP ranks, 20 steps: step / sampled / activity, fresh jobs, 3 rounds"
    for r in 1 2 3; do
      for t in step sampled activity; do
        run_to "$w-$t-$r" "$PD/$w-$t-$r.txt" "${MPIRUN[@]}" "$COMMPROF" run --backend cuda \
          --model gpt-1.3b --steps 20 --warmup-steps 3 "${args[@]}" --op-timing "$t" \
          --out "$PD/$w-$t-$r"
        grep -E "step time|busy|per-op timing" "$PD/$w-$t-$r.txt" >>"$LOG"
      done
    done
  done
  say "bench allreduce: --instrument 0 against activity (sampled: the reported loop unrecorded), 3 rounds"
  for r in 1 2 3; do
    for t in 0 activity; do
      run_to "bench-$t-$r" "$PD/bench-$t-$r.txt" "${MPIRUN[@]}" "$COMMPROF" bench --backend cuda \
        --ops allreduce "${SWEEP[@]}" --instrument "$t" --out "$PD/bench-$t-$r"
      grep -E "^ +[0-9]+ |recorded, ratio" "$PD/bench-$t-$r.txt" >>"$LOG"
    done
  done
}

# ---------------------------------------------------------------------------------------------
# peek SQLITE: what nsys recorded in one export: commprof's domain, the capture range, the steps,
# the first COMM ranges.
peek() {
  python3 - "$1" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
text = "COALESCE(n.text, (SELECT value FROM StringIds WHERE id = n.textId))"
q = lambda s: db.execute(s).fetchall()
print("  domains (type 75):", q("SELECT domainId, text FROM NVTX_EVENTS WHERE eventType = 75"))
print("  categories (type 33):", q("SELECT domainId, category, text FROM NVTX_EVENTS WHERE eventType = 33"))
print("  measured_steps:", q("SELECT n.start, n.end, n.domainId, n.textId FROM NVTX_EVENTS n WHERE %s = 'measured_steps'" % text))
print("  steps:", [r[0] for r in q("SELECT %s FROM NVTX_EVENTS n WHERE %s LIKE 'step %%' ORDER BY n.start" % (text, text))])
print("  first kernel, first step start:", q("SELECT MIN(start) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
      q("SELECT MIN(n.start) FROM NVTX_EVENTS n WHERE %s LIKE 'step %%'" % text))
for r in q("SELECT %s, n.int64Value, n.uint64Value FROM NVTX_EVENTS n WHERE n.category = 2 ORDER BY n.start LIMIT 6" % text):
    print("  COMM range:", r)
EOF
}

# capture_case NAME CAPTURE COMPARE-FLAGS -- COMMPROF-RUN-ARGS...: a tiny job with every rank
# under scripts/nsys-profile-rank.sh --capture CAPTURE, its two exports imported and checked
# against the job's own rank files. Keeps the exports (xz) as test data for the importer.
capture_case() {
  local name=$1 capture=$2 flags=$3 d=$PD/capture/$1 f
  shift 4
  mkdir -p "$d"
  run_to "capture $name: nsys-profile-rank.sh --capture $capture -- commprof run $*" "$d/profile.txt" \
    "${MPIRUN[@]}" scripts/nsys-profile-rank.sh --nsys "$NSYS" --out "$d/nsys" --capture "$capture" -- \
    "$COMMPROF" run --backend cuda --model tiny --dtype bfloat16 "$@" --out "$d/run"
  run_to "capture $name: reports to sqlite" "$d/convert.txt" nsys_to_sqlite "$d/nsys"
  local exports=()
  for f in "$d"/nsys/commprof_*.sqlite; do [ -f "$f" ] && exports+=("$f"); done
  if [ "${#exports[@]}" -ne 2 ]; then
    say "capture $name: FAILED: ${#exports[@]} export(s), expected 2 (commprof_<host>_0 and _1)"
    PHASE_RC=1
    return
  fi
  for f in "${exports[@]}"; do
    echo "-- $f" >>"$LOG"
    peek "$f" >>"$LOG" 2>&1
  done
  run_to "capture $name: import-nsys" "$d/import.txt" \
    "$COMMPROF" import-nsys "${exports[@]}" -o "$d/from-nsys" || return
  "$COMMPROF" report "$d/from-nsys" -o "$d/from-nsys/report.txt" >>"$LOG" 2>&1
  # shellcheck disable=SC2086  # flags: empty or one word
  run_to "capture $name: compare-nsys-import.py" "$d/compare.txt" \
    python3 scripts/compare-nsys-import.py "$d/run" "$d/from-nsys" $flags
  cat "$d/compare.txt" >>"$LOG"
  rm -f "$d"/nsys/*.nsys-rep
  xz -T0 -6 "$d"/nsys/*.sqlite 2>>"$LOG"
}

# nsys_13b: the gpt-1.3b dp job with every rank under nsys (measured steps, cuda + nvtx), whose
# op timing falls back to events (nsys holds CUPTI): exports, import-nsys, both reports, the
# recipe nccl_gpu_overlap_trace; then the same job with --op-timing activity, which must refuse.
nsys_13b() {
  local rep=$PD/dp-nsys-rep f
  run_to "dp gpt-1.3b, each rank under nsys (op timing falls back to events)" "$PD/dp-nsys.txt" \
    "${MPIRUN[@]}" scripts/nsys-profile-rank.sh --nsys "$NSYS" --trace cuda,nvtx --out "$rep" -- \
    "${RUN13[@]}" --workload dp --out "$PD/dp-nsys" || return
  grep -E "op timing|warn|CUPTI|error" "$PD/dp-nsys.txt" >>"$LOG"
  run_to "dp-nsys: import + sqlite export" "$PD/dp-nsys-convert.txt" nsys_to_sqlite "$rep"
  ls -la "$rep" >>"$LOG"
  run_to "dp-nsys: commprof import-nsys" "$PD/dp-nsys-import.txt" \
    "$COMMPROF" import-nsys "$rep"/commprof_*.sqlite -o "$PD/dp-nsys-import"
  report_runs dp-nsys-import dp-nsys
  run_to "dp-nsys: nsys recipe nccl_gpu_overlap_trace" "$PD/dp-recipe.txt" \
    nsys_libs "$NSYS" recipe nccl_gpu_overlap_trace --input "$rep"/*.nsys-rep --output "$PD/dp-recipe" --csv
  if [ -d "$PD/dp-recipe" ]; then
    find "$PD/dp-recipe" -maxdepth 2 -type f | head -n 30 >>"$LOG"
    find "$PD/dp-recipe" -name '*.csv' | head -n 5 | while read -r f; do
      echo "--- $f"
      head -n 40 "$f"
    done >>"$LOG"
    tar -C "$PD" -cJf "$PD/dp-recipe.tar.xz" dp-recipe 2>>"$LOG" && rm -rf "$PD/dp-recipe"
  fi
  rm -rf "$rep"/*.nsys-rep "$rep"/*_pqtdir
  xz -T0 -6 "$rep"/*.sqlite 2>>"$LOG"

  run_expect 2 "dp --op-timing activity under nsys (exit 2 expected: nsys holds CUPTI)" \
    "$PD/dp-nsys-activity.txt" \
    "${MPIRUN[@]}" scripts/nsys-profile-rank.sh --nsys "$NSYS" --trace cuda,nvtx --out "$PD/activity-rep" -- \
    "${RUN13[@]}" --workload dp --op-timing activity
  grep -E "error" "$PD/dp-nsys-activity.txt" | head -n 3 >>"$LOG"
  rm -rf "$PD/activity-rep"
}

# nsys_like_for_like: a step-timed dp job under nsys (its streams carry what an activity-timed
# job's carry) between two activity-timed jobs without nsys; the import against both, and the
# recipe's wall time against import-nsys' on the same reports.
nsys_like_for_like() {
  local rep=$PD/step-nsys-rep
  wl dp-activity-c1 --workload dp --op-timing activity --out "$PD/dp-activity-c1"
  run_to "dp step-timed job under nsys" "$PD/dp-nsys-step.txt" \
    "${MPIRUN[@]}" scripts/nsys-profile-rank.sh --nsys "$NSYS" --trace cuda,nvtx --out "$rep" -- \
    "${RUN13[@]}" --workload dp --op-timing step
  wl dp-activity-c2 --workload dp --op-timing activity --out "$PD/dp-activity-c2"
  run_to "dp-nsys-step: import + sqlite export" "$PD/dp-nsys-step-convert.txt" nsys_to_sqlite "$rep"
  run_to "dp-nsys-step: nsys recipe nccl_gpu_overlap_trace" "$PD/step-recipe.txt" \
    nsys_libs "$NSYS" recipe nccl_gpu_overlap_trace --input "$rep"/*.nsys-rep --output "$PD/step-recipe" --csv
  if [ -d "$PD/step-recipe" ]; then
    find "$PD/step-recipe" -name '*.csv' >>"$LOG"
    tar -C "$PD" -cJf "$PD/step-recipe.tar.xz" step-recipe 2>>"$LOG" && rm -rf "$PD/step-recipe"
  fi
  run_to "dp-nsys-step: commprof import-nsys" "$PD/dp-nsys-step-import.txt" \
    "$COMMPROF" import-nsys "$rep"/commprof_*.sqlite -o "$PD/dp-nsys-step-import"
  rm -rf "$rep"
  report_runs dp-nsys-step-import dp-activity-c1 dp-activity-c2
  local a b
  for a in "dp-nsys-step-import dp-activity-c1" "dp-nsys-step-import dp-activity-c2" \
    "dp-activity-c2 dp-activity-c1"; do
    read -r a b <<<"$a"
    run_to "compare-reports.py $a $b" "$PD/compare-$a-vs-$b.txt" \
      python3 scripts/compare-reports.py "$PD/$a.report.json" "$PD/$b.report.json"
    cat "$PD/compare-$a-vs-$b.txt" >>"$LOG"
  done
}

phase_nsys() {
  need_commprof || return
  local line
  nsys_find >"$PD/nsys-find.txt" 2>&1
  local rc=$?
  while IFS= read -r line; do say "$line"; done <"$PD/nsys-find.txt"
  if [ "$rc" -ne 0 ]; then
    say "FAILED: nsys not found; set NSYS to the nsys CLI (scripts/lib/nsys.sh)"
    PHASE_RC=1
    return
  fi
  say "capture checks: tiny jobs, every rank under scripts/nsys-profile-rank.sh"
  capture_case dp measured "" -- --workload dp --steps 3 --warmup-steps 2
  capture_case tp measured "" -- --workload tp --steps 3 --warmup-steps 2
  capture_case dp-all all --all-steps -- --workload dp --steps 2 --warmup-steps 1

  say "tiny dp job recorded whole (nsys -t cuda,nvtx), exported to SQLite (tests/data/nsys-dp-tiny-2xh200)"
  run_to "tiny-whole: profile" "$PD/tiny-whole.txt" \
    "${MPIRUN[@]}" scripts/nsys-profile-rank.sh --nsys "$NSYS" --capture all --trace cuda,nvtx \
    --out "$PD/tiny-whole/nsys" -- "$COMMPROF" run --backend cuda --workload dp --model tiny \
    --dtype bfloat16 --steps 3 --warmup-steps 1 --out "$PD/tiny-whole/run"
  run_to "tiny-whole: reports to sqlite" "$PD/tiny-whole-convert.txt" nsys_to_sqlite "$PD/tiny-whole/nsys"
  rm -f "$PD"/tiny-whole/nsys/*.nsys-rep

  say "gpt-1.3b dp under nsys: events against the import, and the recipe"
  nsys_13b
  say "gpt-1.3b dp: a step-timed job under nsys against activity-timed jobs"
  nsys_like_for_like
}

# ---------------------------------------------------------------------------------------------
phase_fidelity() {
  need_commprof || return
  local py=${PYTHON:-python3} fid="$COMMPROF_ROOT/scripts/fidelity"
  if ! "$py" -c 'import torch; assert torch.cuda.is_available()' >>"$LOG" 2>&1; then
    say "FAILED: $py has no torch with CUDA (set PYTHON)"
    PHASE_RC=1
    return
  fi
  local presets layers
  read -r -a presets <<<"${FIDELITY_PRESETS:-gpt-1.3b gpt-7b llama-1b llama-8b}"
  read -r -a layers <<<"${FIDELITY_LAYERS:-24 8 16 4}"
  # The GPU's clock follows the power its operands draw, and one pair of runs differs by a few
  # percent from the next: GEMM_ROUNDS (3) pairs, torch and commprof alternately.
  local r
  for r in $(seq 1 "${GEMM_ROUNDS:-3}"); do
    run_to "torch matmul 8192^3 bf16, round $r" "$PD/gemm-torch-$r.txt" \
      "$py" "$fid/torch_step.py" --gemm 8192 --out "$PD/gemm-torch-$r.json"
    run_to "commprof gemm 8192^3 bf16, round $r" "$PD/gemm-commprof-$r.txt" \
      "${MPIRUN_BASE[@]}" -np 1 "$COMMPROF" gemm --backend cuda --iters 50 --warmup 10
    run_to "compare gemm, round $r" "$PD/gemm-compare-$r.txt" "$py" "$fid/compare.py" \
      --gemm-commprof "$PD/gemm-commprof-$r.txt" --gemm-torch "$PD/gemm-torch-$r.json" \
      --json "$PD/gemm-compare-$r.json"
    cat "$PD/gemm-compare-$r.txt" >>"$LOG"
  done
  local i p l ends
  for i in "${!presets[@]}"; do
    p=${presets[$i]}
    l=${layers[$i]:-${layers[-1]}}
    # With the preset's vocabulary (embedding, LM head and loss on both sides) and without
    # (--vocab 0 on both: the layers alone, the comparison of earlier versions).
    for ends in ${FIDELITY_ENDS:-with without}; do
      fidelity_preset "$p" "$l" "$ends"
    done
  done
}

# One preset's comparison: FIDELITY_TORCH_ROUNDS PyTorch processes, the one of median step time
# against commprof's run of each --attention of FIDELITY_ATTENTION, same shapes, same GPU.
fidelity_preset() {
  local p=$1 l=$2 ends=$3 py=${PYTHON:-python3} fid="$COMMPROF_ROOT/scripts/fidelity"
  local tag=$p vocab=()
  if [ "$ends" = without ]; then
    tag=$p-no-ends
    vocab=(--vocab 0)
  fi
  # PyTorch's step is host-bound at the small presets and varies by several percent from one
  # process to the next: FIDELITY_TORCH_ROUNDS (3) processes, the one of median step time
  # compared (every round's step time is in the log).
  local r steps=()
  for r in $(seq 1 "${FIDELITY_TORCH_ROUNDS:-3}"); do
    run_to "torch step $tag, $l layers, round $r" "$PD/$tag-torch-$r.txt" \
      "$py" "$fid/torch_step.py" --preset "$p" --layers "$l" "${vocab[@]}" \
      --out "$PD/$tag-torch-$r.json" --trace "$PD/$tag-torch-$r.trace.json"
    steps+=("$PD/$tag-torch-$r.json")
  done
  "$py" - "${steps[@]}" >"$PD/$tag-torch-median.txt" 2>>"$LOG" <<'PY'
import json, sys
runs = sorted((json.load(open(f))["step_ms"]["mean"], f) for f in sys.argv[1:])
print(" ".join(f"{ms:.2f}" for ms, _ in runs))
print(runs[len(runs) // 2][1])
PY
  say "  torch step $tag (ms, each round, sorted): $(head -n 1 "$PD/$tag-torch-median.txt")"
  local median
  median=$(sed -n 2p "$PD/$tag-torch-median.txt")
  cp "$median" "$PD/$tag-torch.json"
  mv "${median%.json}.trace.json" "$PD/$tag-torch-trace.json" 2>/dev/null
  rm -f "$PD/$tag"-torch-*.trace.json
  # The default (fused attention), then attention as GEMMs: both against the same torch step.
  # FIDELITY_BASELINE (another build folder, e.g. main's) runs its commprof too, against the
  # same torch step on the same GPU (its files named $tag-baseline-*).
  local a bin who
  for a in ${FIDELITY_ATTENTION:-fused gemm}; do
    for who in '' ${FIDELITY_BASELINE:+baseline-}; do
      bin=$COMMPROF
      [ -n "$who" ] && bin=$(abs_path "$FIDELITY_BASELINE")/commprof
      run_to "commprof run $tag, $l layers, --attention $a ${who:+(baseline)}" \
        "$PD/$tag-${who}commprof-$a.txt" "${MPIRUN_BASE[@]}" -np 1 "$bin" run --backend cuda \
        --model "$p" --layers "$l" "${vocab[@]}" --workload dp --op-timing activity --steps 5 \
        --warmup-steps 2 --attention "$a" ${FIDELITY_RUN_ARGS:-} --out "$PD/$tag-${who}commprof-$a"
      run_to "compare $tag ($a) ${who:+(baseline)}" "$PD/$tag-${who}compare-$a.txt" "$py" \
        "$fid/compare.py" --commprof "$PD/$tag-${who}commprof-$a" --torch "$PD/$tag-torch.json" \
        --json "$PD/$tag-${who}compare-$a.json"
      { echo "## $tag, --attention $a ${who:+(baseline $FIDELITY_BASELINE)}"
        cat "$PD/$tag-${who}compare-$a.txt"; } >>"$LOG"
      # The memory-bound kernels and ops one by one (scripts/fidelity/other_kernels.py).
      [ -f "$PD/$tag-torch-trace.json" ] &&
        "$py" "$fid/other_kernels.py" --trace "$PD/$tag-torch-trace.json" \
          --commprof "$PD/$tag-${who}commprof-$a" >"$PD/$tag-${who}other-$a.txt" 2>>"$LOG"
    done
  done
}

# ---------------------------------------------------------------------------------------------
phase_calibrate() {
  need_commprof || return
  if ! nsys_find >"$PD/nsys-find.txt" 2>&1; then
    say "FAILED: nsys not found; set NSYS to the nsys CLI (scripts/lib/nsys.sh)"
    PHASE_RC=1
    return
  fi
  local py=${PYTHON:-python3} presets layers i
  read -r -a presets <<<"${CALIBRATE_PRESETS:-gpt-1.3b llama-8b}"
  read -r -a layers <<<"${CALIBRATE_LAYERS:-24 4}"
  for i in "${!presets[@]}"; do
    # A model traced with its ends (the preset's vocabulary, on both sides) and without them
    # (--vocab 0 on both): the calibration tells the ends' kernels apart (issue #29).
    for ends in ${CALIBRATE_ENDS:-with without}; do
      calibrate_preset "${presets[$i]}" "${layers[$i]:-${layers[-1]}}" "$ends"
    done
  done
}

# One traced model: PyTorch's step under nsys, imported, then commprof run calibrated from it.
calibrate_preset() {
  local p=$1 l=$2 ends=$3 py=${PYTHON:-python3} fid="$COMMPROF_ROOT/scripts/fidelity"
  local tag=$p vocab=()
  if [ "$ends" = without ]; then
    vocab=(--vocab 0)
    tag=$p-no-ends
  fi
  {
    mkdir -p "$PD/$tag-nsys"
    run_to "torch step $tag, $l layers, under nsys" "$PD/$tag-torch.txt" \
      nsys_libs "$NSYS" profile -t cuda,nvtx -f true -o "$PD/$tag-nsys/torch" \
      "$py" "$fid/torch_step.py" --preset "$p" --layers "$l" "${vocab[@]}" --no-profile \
      --out "$PD/$tag-torch.json" || return
    run_to "$tag: to sqlite" "$PD/$tag-convert.txt" nsys_to_sqlite "$PD/$tag-nsys" || return
    run_to "$tag: import-nsys --step-range \"step \"" "$PD/$tag-import.txt" \
      "$COMMPROF" import-nsys "$PD/$tag-nsys/torch.sqlite" --rank 0 --step-range "step " \
      -o "$PD/$tag-traced" || return
    # Twice: the traced step's gaps replayed as idle time (the default), and left out
    # (--no-host-gaps: the kernels back to back).
    local gaps run
    for gaps in replay leave-out; do
      run=$tag-calibrated
      local flag=()
      if [ "$gaps" = leave-out ]; then
        run=$tag-no-gaps
        flag=(--no-host-gaps)
      fi
      run_to "$tag: commprof run --compute-from ($gaps gaps)" "$PD/$run.txt" \
        "${MPIRUN_BASE[@]}" -np 1 "$COMMPROF" run --backend cuda --model "$p" --layers "$l" \
        "${vocab[@]}" "${flag[@]}" --workload dp --op-timing activity --steps 5 --warmup-steps 2 \
        --compute-from "$PD/$tag-traced" --out "$PD/$run"
      { echo "## $tag, gaps: $gaps"; grep -E "^# compute from|^# note|step time|COMP busy" "$PD/$run.txt"; } >>"$LOG"
      run_to "$tag: calibrated ($gaps gaps) against traced" "$PD/$run-compare.txt" \
        "$py" "$fid/calibration.py" --traced "$PD/$tag-traced" --mock "$PD/$run" \
        --json "$PD/$run-compare.json"
      cat "$PD/$run-compare.txt" >>"$LOG"
    done
    rm -f "$PD/$tag-nsys"/*.nsys-rep
    xz -T0 -6 "$PD/$tag-nsys"/*.sqlite 2>>"$LOG"
  }
}

# ---------------------------------------------------------------------------------------------
phase_torchtrace() {
  local py=${PYTHON:-python3} t="$COMMPROF_ROOT/scripts/torch/ddp_trace.py"
  run_to "DDP trace, 1 rank, nccl" "$PD/nccl1.txt" "$py" "$t" --out "$PD/nccl-1rank"
  run_to "DDP trace, 2 ranks, gloo (CPU)" "$PD/gloo2.txt" \
    "$py" -m torch.distributed.run --nproc-per-node 2 --master-port 29544 "$t" --backend gloo \
    --out "$PD/gloo-2rank"
  if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ]; then
    run_to "DDP trace, 2 ranks, nccl" "$PD/nccl2.txt" \
      "$py" -m torch.distributed.run --nproc-per-node 2 --master-port 29545 "$t" \
      --out "$PD/nccl-2rank"
  fi
  ls -la "$PD"/*/ >>"$LOG"
}

# ---------------------------------------------------------------------------------------------
# stage_run NAME ARGS...: one llama-1b pipeline job on NP ranks and its report's stage table.
stage_run() {
  local name=$1
  shift
  run_to "$name: run $*" "$PD/$name.txt" "${MPIRUN[@]}" "$COMMPROF" run --backend cuda \
    --model llama-1b --workload pp --pp "$NP" --micro-batches 8 --steps 10 --warmup-steps 3 \
    --out "$PD/$name" "$@" || return
  run_to "$name: report" "$PD/$name-report.txt" "$COMMPROF" report "$PD/$name"
  { echo "## $name ($*)"; step_line "$PD/$name.txt"
    sed -n '/^## Pipeline stages/,/^$/p' "$PD/$name-report.txt"; } >>"$LOG"
}

moe_run() {
  local name=$1
  shift
  run_to "$name: run $*" "$PD/$name.txt" "${MPIRUN[@]}" "$COMMPROF" run --backend cuda \
    --workload dp --ep "$NP" --steps 10 --warmup-steps 3 --out "$PD/$name" "$@" || return
  run_to "$name: report" "$PD/$name-report.txt" "$COMMPROF" report "$PD/$name"
  { echo "## $name ($*)"; step_line "$PD/$name.txt"
    grep -E "^# experts|^#   layer" "$PD/$name.txt" | head -n 6
    sed -n '/^## Communicator groups/,/^$/p;/^## Collectives by message size/,/^$/p' \
      "$PD/$name-report.txt"; } >>"$LOG"
}

# ep_replay NAME: PyTorch's all_to_all_single with the same bytes per peer as run NAME's
# all-to-allvs, on the same GPUs; each step's instances timed on both sides.
ep_replay() {
  local name=$1 py=${PYTHON:-python3}
  run_to "$name: PyTorch replay of its all-to-allvs (torchrun, $NP ranks)" \
    "$PD/$name-torch-replay.txt" env NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN "$py" \
    -m torch.distributed.run --nproc-per-node "$NP" --master-port 29561 \
    "$COMMPROF_ROOT/scripts/torch/alltoall_replay.py" --from "$PD/$name" \
    --out "$PD/$name-torch-replay.json" || return
  { echo "## $name: its all-to-allvs replayed by PyTorch"
    grep -v "^W[0-9]" "$PD/$name-torch-replay.txt" | grep -E "^#|^ *[0-9]|^      " ; } >>"$LOG"
}

phase_moe() {
  need_commprof || return
  if [ "$NP" -lt 2 ]; then
    say "FAILED: the moe phase needs NP >= 2 ranks (expert parallelism)"
    PHASE_RC=1
    return
  fi
  local moe_layers=${MOE_LAYERS:-2}
  moe_run mixtral-zipf --model mixtral-8x7b --layers "$moe_layers"
  [ "${EP_REPLAY:-1}" = 1 ] && ep_replay mixtral-zipf
  moe_run mixtral-uniform --model mixtral-8x7b --layers "$moe_layers" --routing uniform
  moe_run deepseek-zipf --model deepseek-v3-gqa --layers 4
}

phase_cp() {
  need_commprof || return
  if [ "$NP" -lt 2 ]; then
    say "FAILED: the cp phase needs NP >= 2 ranks (context parallelism)"
    PHASE_RC=1
    return
  fi
  local mode
  for mode in p2p a2a allgather; do
    run_to "cp-$mode: run" "$PD/cp-$mode.txt" "${MPIRUN[@]}" "$COMMPROF" run --backend cuda \
      --model llama-1b --layers 4 --workload dp --cp "$NP" --cp-mode "$mode" --steps 10 \
      --warmup-steps 3 --out "$PD/cp-$mode" || continue
    run_to "cp-$mode: report" "$PD/cp-$mode-report.txt" "$COMMPROF" report "$PD/cp-$mode"
    { echo "## cp $NP, --cp-mode $mode"; step_line "$PD/cp-$mode.txt"
      grep -E "busy|^# cp " "$PD/cp-$mode.txt" | head -n 6
      sed -n '/^## Communicator groups/,/^$/p' "$PD/cp-$mode-report.txt"; } >>"$LOG"
  done
}

phase_stages() {
  need_commprof || return
  if [ "$NP" -lt 2 ]; then
    say "FAILED: the stages phase needs NP >= 2 ranks (one pipeline stage each)"
    PHASE_RC=1
    return
  fi
  stage_run no-ends --vocab 0
  stage_run ends-1f1b
  # Megatron-Core's accounting counts the embedding and the loss as a layer each; the split must
  # then divide 16 + 2 layers by the stages.
  if [ $((18 % NP)) = 0 ]; then
    stage_run ends-accounted --account-for-embedding --account-for-loss
  fi
  local split=${STAGES_PP_LAYERS:-}
  [ -z "$split" ] && [ "$NP" = 2 ] && split=10,6
  [ -n "$split" ] && stage_run ends-pp-layers --pp-layers "$split"
  stage_run ends-interleaved --schedule interleaved --virtual-stages 2
}

# ---------------------------------------------------------------------------------------------
phase_plugin() {
  need_commprof || return
  local plugin=${PLUGIN:-$BUILD/src/nccl_profiler/libnccl-profiler-commprof.so}
  if [ ! -f "$plugin" ] || [ -z "${NCCL_TESTS:-}" ]; then
    say "FAILED: the plugin phase needs the plugin ($plugin) and NCCL_TESTS"
    PHASE_RC=1
    return
  fi
  plugin=$(abs_path "$plugin")
  # NCCL says whether it loaded the plugin, and which version of the interface it took. On one
  # rank NCCL sends a plugin no events: the files then list the communicators and no operation.
  run_to "all_reduce_perf, 1 MiB, plugin, NCCL_DEBUG=INFO" "$PD/load.txt" \
    env NCCL_PROFILER_PLUGIN="$plugin" COMMPROF_PLUGIN_OUT="$PD/load" NCCL_DEBUG=INFO \
    NCCL_DEBUG_SUBSYS=INIT,ENV "${MPIRUN[@]}" -x NCCL_PROFILER_PLUGIN -x COMMPROF_PLUGIN_OUT \
    -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS "$NCCL_TESTS/all_reduce_perf" -b 1M -e 1M -c 0
  grep -iE "profiler" "$PD/load.txt" | head -n 5 >>"$LOG"
  head -c 1500 "$PD"/load/rank-0.json >>"$LOG" 2>&1
  echo >>"$LOG"
  local -A nt_name=([allreduce]=all_reduce [allgather]=all_gather [sendrecv]=sendrecv
    [alltoall]=alltoall [reducescatter]=reduce_scatter)
  local op nt round under
  for op in ${PLUGIN_OPS:-allreduce allgather sendrecv}; do
    nt=$NCCL_TESTS/${nt_name[$op]}_perf
    for round in $(seq 1 "${ROUNDS:-2}"); do
      run_to "$op round $round, no plugin" "$PD/$op-plain-$round.txt" \
        "${MPIRUN[@]}" "$nt" "${SWEEP[@]}" -c 0 -J "$PD/$op-plain-$round.json"
      under=$PD/$op-plugin-$round
      run_to "$op round $round, plugin" "$PD/$op-plugin-$round.txt" \
        env NCCL_PROFILER_PLUGIN="$plugin" COMMPROF_PLUGIN_OUT="$under" COMMPROF_PLUGIN_SAMPLE=1 \
        "${MPIRUN[@]}" -x NCCL_PROFILER_PLUGIN -x COMMPROF_PLUGIN_OUT -x COMMPROF_PLUGIN_SAMPLE \
        "$nt" "${SWEEP[@]}" -c 0 -J "$PD/$op-plugin-$round.json"
      for events in ${PLUGIN_EVENTS:-}; do
        run_to "$op round $round, plugin, COMMPROF_PLUGIN_EVENTS=$events" \
          "$PD/$op-events-$events-$round.txt" \
          env NCCL_PROFILER_PLUGIN="$plugin" COMMPROF_PLUGIN_OUT="$PD/$op-events-$events-$round" \
          COMMPROF_PLUGIN_EVENTS="$events" COMMPROF_PLUGIN_SAMPLE=1 "${MPIRUN[@]}" \
          -x NCCL_PROFILER_PLUGIN -x COMMPROF_PLUGIN_OUT -x COMMPROF_PLUGIN_EVENTS \
          -x COMMPROF_PLUGIN_SAMPLE \
          "$nt" "${SWEEP[@]}" -c 0 -J "$PD/$op-events-$events-$round.json"
      done
    done
    run_to "$op: commprof report of the plugin's files" "$PD/$op-report.txt" \
      "$COMMPROF" report "$PD/$op-plugin-1"
    "$COMMPROF" report "$PD/$op-plugin-1" --format json >"$PD/$op-report.json" 2>>"$LOG"
    run_to "$op: against nccl-tests" "$PD/$op-compare.txt" python3 scripts/compare-plugin.py \
      --op "$op" --nccl-tests "$PD/$op-plugin-1.json" --plugin "$PD/$op-plugin-1" \
      --report "$PD/$op-report.json" --plain "$PD/$op"-plain-*.json \
      --with "$PD/$op"-plugin-*.json --json "$PD/$op-compare.json"
    cat "$PD/$op-compare.txt" >>"$LOG"
    for events in ${PLUGIN_EVENTS:-}; do
      # The same table, its cost column the plugin's with COMMPROF_PLUGIN_EVENTS=$events (its
      # busbw columns are the default rounds'; those rounds record nothing).
      run_to "$op: cost with COMMPROF_PLUGIN_EVENTS=$events" "$PD/$op-events-$events.txt" \
        python3 scripts/compare-plugin.py --op "$op" --nccl-tests "$PD/$op-plugin-1.json" \
        --plugin "$PD/$op-plugin-1" --report "$PD/$op-report.json" \
        --plain "$PD/$op"-plain-*.json --with "$PD/$op-events-$events"-*.json
      cat "$PD/$op-events-$events.txt" >>"$LOG"
    done
  done
  run_to "commprof run dp under the plugin" "$PD/run-plugin.txt" \
    env NCCL_PROFILER_PLUGIN="$plugin" COMMPROF_PLUGIN_OUT="$PD/run-plugin" \
    "${MPIRUN[@]}" -x NCCL_PROFILER_PLUGIN -x COMMPROF_PLUGIN_OUT "${RUN13[@]}" \
    --workload dp --op-timing step --out "$PD/run-own"
  run_to "commprof report of the plugin's files of that run" "$PD/run-plugin-report.txt" \
    "$COMMPROF" report "$PD/run-plugin"
  head -n 40 "$PD/run-plugin-report.txt" >>"$LOG"
  run_to "calls of that run that do not match across ranks" "$PD/run-plugin-mismatches.txt" \
    python3 scripts/plugin-mismatches.py "$PD/run-plugin"
  cat "$PD/run-plugin-mismatches.txt" >>"$LOG"
  run_to "PyTorch DDP (torchrun, $NP ranks) under the plugin" "$PD/ddp-plugin.txt" \
    env NCCL_PROFILER_PLUGIN="$plugin" COMMPROF_PLUGIN_OUT="$PD/ddp-plugin" \
    "${PYTHON:-python3}" -m torch.distributed.run --nproc-per-node "$NP" --master-port 29546 \
    scripts/torch/ddp_trace.py --out "$PD/ddp-trace"
  run_to "commprof report of the DDP job's plugin files" "$PD/ddp-plugin-report.txt" \
    "$COMMPROF" report "$PD/ddp-plugin"
  head -n 40 "$PD/ddp-plugin-report.txt" >>"$LOG"
  run_to "calls of the DDP job that do not match across ranks" "$PD/ddp-plugin-mismatches.txt" \
    python3 scripts/plugin-mismatches.py "$PD/ddp-plugin"
  cat "$PD/ddp-plugin-mismatches.txt" >>"$LOG"
}

# ---------------------------------------------------------------------------------------------
# The plugin's cost by message size, off / sampled / full, beside nccl-tests in one call: per op
# of PLUGINCOST_OPS, ROUNDS rounds of three runs of one nccl-tests binary (1 MiB..1 GiB by 4,
# PLUGINCOST_ITERS iterations after a tenth as many warm-ups), each a fresh job. Sampled runs
# time one call in PLUGIN_SAMPLE (default 128, the plugin's default); with that many iterations
# every size has a few timed calls, whose busbw compare-plugin.py sets against nccl-tests'.
# nccl-tests' size argument (a number, or one with K, M or G: powers of 1024) in bytes.
size_bytes() {
  local n=${1%[KkMmGg]}
  case $1 in
    *[Kk]) echo $((n << 10)) ;;
    *[Mm]) echo $((n << 20)) ;;
    *[Gg]) echo $((n << 30)) ;;
    *) echo "$1" ;;
  esac
}

phase_plugincost() {
  need_commprof || return
  local plugin=${PLUGIN:-$BUILD/src/nccl_profiler/libnccl-profiler-commprof.so}
  if [ ! -f "$plugin" ] || [ -z "${NCCL_TESTS:-}" ]; then
    say "FAILED: the plugincost phase needs the plugin ($plugin) and NCCL_TESTS"
    PHASE_RC=1
    return
  fi
  plugin=$(abs_path "$plugin")
  local iters=${PLUGINCOST_ITERS:-512} k=${PLUGIN_SAMPLE:-128}
  local sizes=(-b "${PLUGINCOST_MIN:-1M}" -e "${PLUGINCOST_MAX:-1G}" -f 4 -n "$iters"
    -w $((iters / 10)) -c 0)
  local -A nt_name=([allreduce]=all_reduce [allgather]=all_gather [reducescatter]=reduce_scatter
    [sendrecv]=sendrecv [alltoall]=alltoall)
  # Each mode: the sample period and the events the plugin asks NCCL for. once: K = 2^40, the
  # first call alone timed (what the mask's toggling costs apart from the timed calls); calls:
  # no kernel channel events at all; none: nothing asked of NCCL. nullcalls and nullcoll load
  # the null plugin instead (NULL_PLUGIN, default $BUILD/tests/src/nccl_profiler/
  # libnccl-profiler-null.so: it does nothing) with calls' mask (Coll, P2p and their API events:
  # 1542) and with Coll and P2p alone (6): what NCCL's delivery of those events costs by itself.
  local -A mode_k=([sampled]=$k [full]=1 [once]=1099511627776 [calls]=$k [none]=$k
    [nullcalls]=$k [nullcoll]=$k)
  local -A mode_events=([sampled]=kernels [full]=kernels [once]=kernels [calls]=calls [none]=none
    [nullcalls]=calls [nullcoll]=calls)
  local -A mode_mask=([nullcalls]=1542 [nullcoll]=6)
  local null=${NULL_PLUGIN:-$BUILD/tests/src/nccl_profiler/libnccl-profiler-null.so} so
  local modes
  read -r -a modes <<<"${PLUGINCOST_MODES:-sampled full}"
  local op nt round mode turn order=(off "${modes[@]}")
  for mode in "${modes[@]}"; do
    if [ -z "${mode_k[$mode]:-}" ]; then
      say "FAILED: PLUGINCOST_MODES: '$mode' is none of sampled full once calls none nullcalls \
nullcoll"
      PHASE_RC=1
      return
    fi
    if [ -n "${mode_mask[$mode]:-}" ] && [ ! -f "$null" ]; then
      say "FAILED: PLUGINCOST_MODES: $mode needs the null plugin ($null)"
      PHASE_RC=1
      return
    fi
  done
  [ -f "$null" ] && null=$(abs_path "$null")
  for op in ${PLUGINCOST_OPS:-allreduce allgather}; do
    nt=$NCCL_TESTS/${nt_name[$op]}_perf
    for round in $(seq 1 "${ROUNDS:-2}"); do
      # Each round starts one mode later (off among them), so that no mode always runs first.
      for turn in $(seq 0 $((${#order[@]} - 1))); do
        mode=${order[$(((turn + round - 1) % ${#order[@]}))]}
        if [ "$mode" = off ]; then
          run_to "$op round $round, off" "$PD/$op-off-$round.txt" \
            "${MPIRUN[@]}" "$nt" "${sizes[@]}" -J "$PD/$op-off-$round.json"
          continue
        fi
        so=$plugin
        [ -n "${mode_mask[$mode]:-}" ] && so=$null
        run_to "$op round $round, plugin $mode (COMMPROF_PLUGIN_SAMPLE=${mode_k[$mode]}, \
COMMPROF_PLUGIN_EVENTS=${mode_events[$mode]}, ${so##*/})" "$PD/$op-$mode-$round.txt" \
          env NCCL_PROFILER_PLUGIN="$so" COMMPROF_PLUGIN_OUT="$PD/$op-$mode-$round" \
          COMMPROF_PLUGIN_SAMPLE="${mode_k[$mode]}" COMMPROF_PLUGIN_EVENTS="${mode_events[$mode]}" \
          COMMPROF_NULL_PROFILER_MASK="${mode_mask[$mode]:-0}" \
          "${MPIRUN[@]}" -x NCCL_PROFILER_PLUGIN -x COMMPROF_PLUGIN_OUT -x COMMPROF_PLUGIN_SAMPLE \
          -x COMMPROF_PLUGIN_EVENTS -x COMMPROF_NULL_PROFILER_MASK \
          "$nt" "${sizes[@]}" -J "$PD/$op-$mode-$round.json"
      done
    done
    for mode in "${modes[@]}"; do
      # The cost: the median of the runs with the plugin (this mode) against without it.
      { echo "== $op, plugin $mode: cost"
        python3 scripts/nccl-tests-cost.py --plain "$PD/$op"-off-[0-9]*.json \
          --with "$PD/$op-$mode"-[0-9]*.json; } >>"$LOG" 2>&1
      [ "$mode" = sampled ] || [ "$mode" = full ] || continue
      "$COMMPROF" report "$PD/$op-$mode-1" --format json >"$PD/$op-$mode-report.json" 2>>"$LOG"
      # The cost column (means); the busbw columns: the timed calls' against nccl-tests' own.
      # Then what the plugin counted.
      run_to "$op: plugin $mode against nccl-tests" "$PD/$op-$mode-compare.txt" \
        python3 scripts/compare-plugin.py --op "$op" --nccl-tests "$PD/$op-$mode-1.json" \
        --plugin "$PD/$op-$mode-1" --report "$PD/$op-$mode-report.json" \
        --plain "$PD/$op"-off-[0-9]*.json --with "$PD/$op-$mode"-[0-9]*.json \
        --json "$PD/$op-$mode-compare.json"
      { echo "== $op, plugin $mode"; cat "$PD/$op-$mode-compare.txt"
        python3 scripts/plugin-counts.py "$PD/$op-$mode-1"
        # The report's back-to-back busbw per placement against nccl-tests' figure for the same
        # loop, every round; the sampled mode's, whose cost leaves nccl-tests' loop as it was.
        # From 4 MiB: at 1 MiB the 4 or 5 timed pairs of a run came within 3%, not the 1% asked.
        if [ "$mode" = sampled ] && [ "$(size_bytes "${PLUGINCOST_MAX:-1G}")" -ge 4194304 ]; then
          for round in $(seq 1 "${ROUNDS:-2}"); do
            echo "-- round $round"
            "$COMMPROF" report "$PD/$op-$mode-$round" --format json \
              -o "$PD/$op-$mode-report-$round.json"
            python3 tests/tools/back_to_back_check.py "$PD/$op-$mode-report-$round.json" \
              "$PD/$op-$mode-$round.json" 4194304 0.01
          done
        fi; } >>"$LOG" 2>&1
    done
  done
}

# ---------------------------------------------------------------------------------------------
phase_pluginsteps() {
  need_commprof || return
  local plugin py=${PYTHON:-python3} dir=$PD
  need_plugin pluginsteps && need_torch_gpus pluginsteps "$NP" || return
  local mode flag k
  for k in ${PLUGIN_STEPS_SAMPLE:-1}; do
    for mode in ${PLUGIN_STEPS_MODES:-ddp fsdp}; do
      dir=$PD/$mode
      [ "$k" = 1 ] || dir=$PD/$mode-k$k
      flag=()
      [ "$mode" = fsdp ] && flag=(--fsdp)
      run_to "PyTorch $mode, ${PLUGIN_STEPS:-12} steps on $NP ranks, under the plugin (K=$k)" \
        "$dir.txt" env NCCL_PROFILER_PLUGIN="$plugin" COMMPROF_PLUGIN_OUT="$dir/capture" \
        COMMPROF_PLUGIN_SAMPLE="$k" "$py" -m torch.distributed.run --nproc-per-node "$NP" \
        --master-port 29547 scripts/torch/ddp_steps.py --out "$dir/job" \
        --steps "${PLUGIN_STEPS:-12}" "${flag[@]}"
      cat "$dir.txt" >>"$LOG"
      run_to "commprof report of the $mode capture (K=$k): the steps it finds" \
        "$dir/report.txt" "$COMMPROF" report "$dir/capture"
      "$COMMPROF" report "$dir/capture" --format json -o "$dir/report.json" >>"$LOG" 2>&1
      head -n 60 "$dir/report.txt" >>"$LOG"
    done
  done
}

phase_hangdumps() {
  local py=${PYTHON:-python3} fault dir rc
  if ! "$py" -c "import torch, sys; sys.exit(torch.cuda.device_count() < 2)" >>"$LOG" 2>&1; then
    say "FAILED: the hangdumps phase needs a torch that sees 2 GPUs"
    PHASE_RC=1
    return
  fi
  for fault in ${HANG_FAULTS:-skip count}; do
    dir=$PD/$fault
    mkdir -p "$dir"
    # The watchdog times the collective out and dumps; the job then ends by itself.
    say "fr_hang.py --fault $fault: the watchdog must time out and dump"
    env TORCH_FR_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_NCCL_ENABLE_TIMING=1 \
      TORCH_FR_DUMP_TEMP_FILE="$dir/fr-timeout-rank" \
      timeout 150 "$py" -m torch.distributed.run --nproc-per-node 2 --master-port 29549 \
      scripts/torch/fr_hang.py --out "$dir" --fault "$fault" >"$dir/job.log" 2>&1
    rc=$?
    say "  exit $rc; files: $(find "$dir" -maxdepth 1 -type f -printf '%f ')"
    grep -E "^fr_hang|Timeout|timed out|[Dd]ump" "$dir/job.log" | head -n 20 >>"$LOG"
  done
}

# stamp: each line of stdin with the wall clock (seconds since the epoch) in front.
stamp() {
  local line
  while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done
}

phase_livehang() {
  need_commprof || return
  local plugin py=${PYTHON:-python3} flush=${LIVEHANG_FLUSH_S:-1} fault dir job rc i planted first
  need_plugin livehang && need_torch_gpus livehang 2 || return
  for fault in ${LIVEHANG_FAULTS:-skip graph}; do
    dir=$PD/$fault
    mkdir -p "$dir"
    say "fr_hang.py --fault $fault under the plugin (flush ${flush} s), diagnose --watch beside it"
    env NCCL_PROFILER_PLUGIN="$plugin" COMMPROF_PLUGIN_OUT="$dir/capture" COMMPROF_PLUGIN_SAMPLE=1 \
      COMMPROF_PLUGIN_FLUSH_S="$flush" TORCH_FR_BUFFER_SIZE=2000 TORCH_NCCL_ENABLE_TIMING=1 \
      timeout 150 "$py" -m torch.distributed.run --nproc-per-node 2 --master-port 29555 \
      scripts/torch/fr_hang.py --out "$dir" --fault "$fault" --timeout 20 >"$dir/job.log" 2>&1 &
    job=$!
    # The watch starts once both ranks' files exist (the communicators are up).
    for i in $(seq 1 120); do
      [ -f "$dir/capture/rank-0.json" ] && [ -f "$dir/capture/rank-1.json" ] && break
      sleep 0.5
    done
    timeout -s INT 40 "$COMMPROF" diagnose --watch --interval 0.5 "$dir/capture" 2>&1 |
      stamp >"$dir/watch.txt" &
    wait "$job"
    rc=$?
    wait
    say "  job exit $rc; the watch's lines:"
    sed 's/^/    /' "$dir/watch.txt" >>"$LOG"
    planted=$(sed -n 's/.*"planted_unix": \([0-9.]*\).*/\1/p' "$dir"/meta-rank1.json 2>/dev/null)
    first=$(awk '$2 == "stall:" { print $1; exit }' "$dir/watch.txt")
    if [ -n "$planted" ] && [ -n "$first" ]; then
      say "  first stall said $(awk -v a="$first" -v b="$planted" 'BEGIN { printf "%.2f", a - b }') s after the fault was planted (flush period $flush s)"
    else
      say "  FAILED: no stall said by the watch (planted at '${planted:-?}')"
      PHASE_RC=1
    fi
    run_expect 4 "diagnose of the capture" "$dir/diagnose.txt" "$COMMPROF" diagnose "$dir/capture"
    "$COMMPROF" diagnose "$dir/capture" --format json -o "$dir/diagnose.json" >>"$LOG" 2>&1
    sed -n '1,12p' "$dir/diagnose.txt" >>"$LOG"
    # The Flight Recorder's own dumps of the same job, alone and with the capture.
    "$COMMPROF" diagnose "$dir"/fr-explicit-rank*.json >"$dir/diagnose-fr.txt" 2>&1
    say "  diagnose of the Flight Recorder dumps: exit $?"
    sed -n '1,8p' "$dir/diagnose-fr.txt" >>"$LOG"
    grep -E "^fr_hang" "$dir/job.log" >>"$LOG"
  done
}

phase_a2agap() {
  need_commprof || return
  local py=${PYTHON:-python3} torch_nccl base=$PD
  if [ "$NP" -lt 2 ]; then
    say "FAILED: the a2agap phase needs NP >= 2 ranks (expert parallelism)"
    PHASE_RC=1
    return
  fi
  torch_nccl=$("$py" -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>>"$LOG")
  local which
  for which in host torch; do
    PD=$base/$which
    mkdir -p "$PD"
    local torch_nccl_path=${LD_LIBRARY_PATH:-}
    if [ "$which" = torch ]; then
      torch_nccl_path=$torch_nccl:${LD_LIBRARY_PATH:-}
      if [ ! -f "$torch_nccl/libnccl.so.2" ]; then
        say "FAILED: no NCCL bundled with PyTorch (looked in '$torch_nccl')"
        PHASE_RC=1
        break
      fi
      # mpirun passes LD_LIBRARY_PATH on (-x): the ranks load PyTorch's libnccl.so.2.
      LD_LIBRARY_PATH=$torch_nccl:${LD_LIBRARY_PATH:-} \
        moe_run mixtral-zipf --model mixtral-8x7b --layers "${MOE_LAYERS:-2}"
    else
      moe_run mixtral-zipf --model mixtral-8x7b --layers "${MOE_LAYERS:-2}"
    fi
    # Which libnccl.so.2 the ranks' loader picks with that path (what the run used).
    say "  $which NCCL: $(LD_LIBRARY_PATH=${torch_nccl_path:-} ldd "$COMMPROF" | grep -m1 libnccl)"
    ep_replay mixtral-zipf
  done
  PD=$base
}

phase_mergepair() {
  need_commprof || return
  local plugin py=${PYTHON:-python3}
  need_plugin mergepair || return
  run_to "PyTorch DDP on $NP ranks, traced and under the plugin" "$PD/job.txt" \
    env NCCL_PROFILER_PLUGIN="$plugin" COMMPROF_PLUGIN_OUT="$PD/capture" COMMPROF_PLUGIN_SAMPLE=1 \
    "$py" -m torch.distributed.run --nproc-per-node "$NP" --master-port 29551 \
    scripts/torch/ddp_trace.py --out "$PD/trace" --wait 1 --warmup 1 --active 3
  run_to "commprof report of the capture" "$PD/report-capture.txt" "$COMMPROF" report "$PD/capture"
  run_to "commprof import-torch of the traces" "$PD/import.txt" \
    "$COMMPROF" import-torch "$PD/trace" -o "$PD/imported"
  ls -la "$PD/capture" "$PD/trace" >>"$LOG" 2>&1
}

phase_mergensys() {
  need_commprof || return
  local plugin py=${PYTHON:-python3}
  need_plugin mergensys || return
  if ! nsys_find >"$PD/nsys-find.txt" 2>&1; then
    say "FAILED: nsys not found; set NSYS to the nsys CLI (scripts/lib/nsys.sh)"
    PHASE_RC=1
    return
  fi
  # One process per rank (mpirun), each in its own nsys: the job's ranks from Open MPI's variables.
  run_to "PyTorch DDP on $NP ranks, each under nsys and the plugin" "$PD/job.txt" \
    "${MPIRUN[@]}" -x NCCL_PROFILER_PLUGIN="$plugin" -x COMMPROF_PLUGIN_OUT="$PD/capture" \
    -x COMMPROF_PLUGIN_SAMPLE=1 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29557 \
    "$here/nsys-profile-rank.sh" --nsys "$NSYS" --capture all --trace cuda,nvtx --out "$PD/nsys" \
    -- "$py" scripts/torch/ddp_steps.py --out "$PD/job" --steps "${MERGENSYS_STEPS:-8}"
  run_to "nsys recordings to SQLite" "$PD/convert.txt" nsys_to_sqlite "$PD/nsys" || return
  run_to "import-nsys --step-range \"step \" --warmup-steps 1" "$PD/import.txt" \
    "$COMMPROF" import-nsys "$PD"/nsys/*.sqlite --step-range "step " --warmup-steps 1 \
    -o "$PD/imported"
  run_to "report CAPTURE IMPORTED (merged)" "$PD/report-merged.txt" "$COMMPROF" report \
    "$PD/capture" "$PD/imported" --merged-out "$PD/merged"
  "$COMMPROF" report "$PD/merged" --format json -o "$PD/report-merged.json" >>"$LOG" 2>&1
  run_to "report of the imported traces alone" "$PD/report-imported.txt" "$COMMPROF" report \
    "$PD/imported"
  grep -E "^# merged" "$PD/report-merged.txt" >>"$LOG"
  head -n 40 "$PD/report-merged.txt" >>"$LOG"
  rm -f "$PD"/nsys/*.nsys-rep
  xz -T0 -6 "$PD"/nsys/*.sqlite 2>>"$LOG"
}

phase_dist() {
  need_commprof || return
  local py=${PYTHON:-python3}
  if [ "$NP" -lt 2 ]; then
    say "FAILED: the dist phase compares parallel steps: NP >= 2 ranks, not NP=$NP"
    PHASE_RC=1
    return
  fi
  if ! "$py" -c "import torch, sys; sys.exit(torch.cuda.device_count() < $NP)" >>"$LOG" 2>&1; then
    say "FAILED: $py has no torch that sees $NP GPUs (set PYTHON, NP)"
    PHASE_RC=1
    return
  fi
  local presets layers i p l mode port=29550
  read -r -a presets <<<"${DIST_PRESETS:-gpt-1.3b llama-1b}"
  read -r -a layers <<<"${DIST_LAYERS:-24 16}"
  for i in "${!presets[@]}"; do
    p=${presets[$i]}
    l=${layers[$i]:-${layers[-1]}}
    for mode in ${DIST_MODES:-ddp fsdp}; do
      # A port per job: the last job's rendezvous port may not be free again yet.
      dist_case "$p" "$l" "$mode" "$port"
      port=$((port + 1))
    done
  done
}

# dist_case PRESET LAYERS ddp|fsdp|tp|megatron-tp PORT: PyTorch's step on NP ranks, traced, imported and
# reported; the mock of the same shapes and parallelism on the same GPUs, reported; compared.
dist_case() {
  local p=$1 l=$2 mode=$3 port=$4 py=${PYTHON:-python3} fid="$COMMPROF_ROOT/scripts/fidelity"
  local tag=$p-$mode mock=(--workload dp) ends=() traces=() f
  [ "$mode" = fsdp ] && mock=(--workload dp --dp-mode zero)
  # Tensor parallelism splits the layers across the ranks: both sides without the model's ends.
  case $mode in tp | megatron-tp) mock=(--workload tp --vocab 0); ends=(--vocab 0) ;; esac
  # NVLink multicast off and NCCL's warnings only, as every commprof rank runs (MPIRUN_BASE).
  run_to "torch $mode $p, $l layers, $NP ranks (torchrun)" "$PD/$tag-torch.txt" \
    env NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN "$py" -m torch.distributed.run --nproc-per-node "$NP" \
    --master-port "$port" "$fid/torch_dist_step.py" --preset "$p" --layers "$l" --mode "$mode" \
    "${ends[@]}" --steps 10 --warmup 3 --trace-dir "$PD/$tag-trace" --trace-steps 5 \
    --out "$PD/$tag-torch.json" || return
  say "  $("$py" - "$PD/$tag-torch.json" 2>>"$LOG" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["step_ms"]
print(f"torch step (ms, untraced, all ranks): mean {s['mean']:.2f}, median {s['median']:.2f}, "
      f"min {s['min']:.2f}; peak memory {max(x['peak_gib'] for x in r['ranks']):.1f} GiB")
PY
)"
  for f in "$PD/$tag-trace"/rank-*.pt.trace.json.gz; do [ -f "$f" ] && traces+=("$f"); done
  if [ "${#traces[@]}" -ne "$NP" ]; then
    say "$tag: FAILED: ${#traces[@]} trace(s) in $PD/$tag-trace, expected $NP"
    PHASE_RC=1
    return
  fi
  run_to "$tag: import-torch" "$PD/$tag-import.txt" \
    "$COMMPROF" import-torch "${traces[@]}" -o "$PD/$tag-torch" || return
  cat "$PD/$tag-import.txt" >>"$LOG"
  report_runs "$tag-torch"
  run_to "commprof run $p, $l layers, ${mock[*]}, $NP ranks" "$PD/$tag-mock.txt" \
    "${MPIRUN[@]}" "$COMMPROF" run --backend cuda --model "$p" --layers "$l" "${mock[@]}" \
    --steps 10 --warmup-steps 3 --out "$PD/$tag-mock" || return
  local s
  s=$(step_line "$PD/$tag-mock.txt")
  [ -z "$s" ] || say "  $s"
  report_runs "$tag-mock"
  run_to "compare $tag" "$PD/$tag-compare.txt" python3 "$fid/compare_dist.py" \
    --torch "$PD/$tag-torch.report.json" --mock "$PD/$tag-mock.report.json" \
    --torch-steps "$PD/$tag-torch.json" --mode "$mode" --label "$p, $l layers, $NP ranks" \
    --json "$PD/$tag-compare.json" || return
  { echo "## $tag"; cat "$PD/$tag-compare.txt"; } >>"$LOG"
  say "  $(tail -n 1 "$PD/$tag-compare.txt")"
}

# ---------------------------------------------------------------------------------------------
phase_estimate() {
  need_commprof || return
  run_to "bench --estimate on $NP ranks" "$PD/bench.txt" "${MPIRUN[@]}" "$COMMPROF" bench \
    --backend cuda --ops allreduce,allgather,reducescatter,broadcast,reduce -b 8 -e 1G -f 4 \
    -n 20 -w 5 --estimate --out "$PD/bench"
  grep -E "ncclGroupSimulateEnd|estimate" "$PD/bench.txt" >>"$LOG"
}

# ---------------------------------------------------------------------------------------------
phase_whatif() {
  need_commprof || return
  if [ "$NP" -lt 2 ]; then
    say "FAILED: the whatif phase needs NP >= 2 ranks (a slowed rank among others)"
    PHASE_RC=1
    return
  fi
  local workloads=${WHATIF_WORKLOADS:-dp tp pp}
  [ -z "${WHATIF_WORKLOADS:-}" ] && [ "$NP" -ge 4 ] && workloads="$workloads hybrid"
  run_to "whatif-bench on $NP ranks: $workloads" "$PD/whatif.txt" env BUILD="$BUILD" \
    BACKEND=cuda MODEL_ARGS="--model gpt-1.3b --layers ${WHATIF_LAYERS:-8}" \
    MPIRUN_ARGS="-x NCCL_NVLS_ENABLE=0" "$here/whatif-bench.sh" "$NP" "$workloads" "$PD/runs"
  grep -E "^#|step predicted" "$PD/whatif.txt" >>"$LOG"
  rm -rf "$PD/runs"
}

# ---------------------------------------------------------------------------------------------
# astra_case NAME RUN-ARGS...: a run on NP GPUs (RUN-ARGS name the model), then its timed step
# through ASTRA-sim.
astra_case() {
  local name=$1
  shift
  run_to "astra $name: run" "$PD/$name.txt" "${MPIRUN[@]}" "$COMMPROF" run --backend cuda \
    --steps 5 --warmup-steps 2 "$@" --out "$PD/$name" || return
  run_to "astra $name: ASTRA-sim" "$PD/$name-astra.txt" env BUILD="$BUILD" \
    "$here/astra-sim-check.sh" "$PD/$name" "$ASTRA_SIM" "$PD/$name-astra" || return
  { echo "## $name"; sed -n '/^# times in ms/,$p' "$PD/$name-astra.txt"; } >>"$LOG"
}

phase_astra() {
  need_commprof || return
  # A binary shipped beside commprof (scripts/astra-sim-build.md) is used when ASTRA_SIM is unset.
  local astra=${ASTRA_SIM:-$BUILD/astra/AstraSim_Analytical_Congestion_Unaware}
  if [ ! -x "$astra" ]; then
    say "FAILED: the astra phase needs ASTRA_SIM, ASTRA-sim's analytical binary (no $astra; build it as scripts/astra-sim-build.md says)"
    PHASE_RC=1
    return
  fi
  ASTRA_SIM=$astra
  say "ASTRA-sim: $ASTRA_SIM"
  local gpt=(--model gpt-1.3b --layers "${ASTRA_LAYERS:-8}")
  astra_case "dp$NP" "${gpt[@]}" --workload dp
  astra_case "tp$NP" "${gpt[@]}" --workload tp
  astra_case "pp$NP" "${gpt[@]}" --workload pp --schedule 1f1b
  astra_case "zero$NP" "${gpt[@]}" --workload dp --dp-mode zero
  astra_case "moe$NP" --model mixtral-8x7b --layers "${MOE_LAYERS:-2}" --workload dp --ep "$NP"
  [ "$NP" -ge 4 ] && astra_case tp2pp2 "${gpt[@]}" --workload hybrid --tp 2 --pp 2 --schedule 1f1b
  # One table of every case: ASTRA-sim's step and commprof's serialised replay against the
  # measured step.
  say "ASTRA-sim against the measured step (ratios), per case:"
  grep -H -E "^commprof (measured step|whatif)" "$PD"/*-astra.txt | sed "s|^$PD/||" >>"$LOG"
}

phase_probe() {
  need_commprof || return
  local r t0 name job
  for r in $(seq 1 "${PROBE_ROUNDS:-3}"); do
    for job in gpt13b default; do
      for name in probe noprobe; do
        local extra=() cmd=("${RUN13[@]}" --workload dp)
        [ "$name" = noprobe ] && extra=(--no-link-probe)
        [ "$job" = default ] && cmd=("$COMMPROF" run --backend cuda)
        t0=$(date +%s.%N)
        run_to "$name round $r: $job run" "$PD/$job-$name-$r.txt" "${MPIRUN[@]}" "${cmd[@]}" \
          "${extra[@]}" --out "$PD/$job-$name-$r"
        say "  $job $name round $r: wall $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s; $(step_line "$PD/$job-$name-$r.txt")"
        grep -E '^# link probe' "$PD/$job-$name-$r.txt" >>"$LOG"
      done
    done
  done
  run_to "project --sweep $((2 * NP)) of a probed run" "$PD/sweep.txt" "$COMMPROF" project \
    "$PD/gpt13b-probe-1" --sweep $((2 * NP))
  cat "$PD/sweep.txt" >>"$LOG"
}

phase_lmhead() {
  need_commprof || return
  local py=${PYTHON:-python3} d runs=()
  for d in 128 1; do
    run_to "commprof run, 1 layer, --make-vocab-size-divisible-by $d" "$PD/run-$d.txt" \
      "${MPIRUN_BASE[@]}" -np 1 "$COMMPROF" run --backend cuda --model gpt-1.3b \
      --layers 1 --workload dp --op-timing activity --steps 5 --warmup-steps 2 \
      --make-vocab-size-divisible-by "$d" --out "$PD/run-$d"
    runs+=(--commprof "$d=$PD/run-$d")
  done
  # gpt-1.3b's shapes (hidden 2048, one sequence of 2048 tokens per micro-batch, GPT-2's vocabulary)
  run_to "lm_head.py" "$PD/lmhead.txt" "$py" "$COMMPROF_ROOT/scripts/fidelity/lm_head.py" \
    --hidden 2048 --tokens 2048 --vocab 50257 --divisible-by 128 --divisible-by 1 "${runs[@]}" \
    --json "$PD/lmhead.json"
  cat "$PD/lmhead.txt" >>"$LOG"
}

phase_multi() {
  case $NP in
    4 | 8) ;;
    *)
      say "FAILED: the multi phase runs on NP=4 or NP=8 ranks, not NP=$NP"
      PHASE_RC=1
      return
      ;;
  esac
  need_commprof || return
  run_to "bench allreduce,allgather,reducescatter on $NP ranks" "$PD/bench.txt" \
    "${MPIRUN[@]}" "$COMMPROF" bench --backend cuda --ops allreduce,allgather,reducescatter \
    "${SWEEP[@]}" --out "$PD/bench"
  if [ "$NP" = 8 ]; then
    wl tp2pp2dp2 --workload hybrid --tp 2 --pp 2 --dp 2 --schedule 1f1b --out "$PD/tp2pp2dp2"
    wl tp8 --workload hybrid --tp 8 --out "$PD/tp8"
    wl dp8 --workload dp --out "$PD/dp8"
    wl pp8-1f1b --workload pp --schedule 1f1b --out "$PD/pp8-1f1b"
    wl pp8-gpipe --workload pp --schedule gpipe --out "$PD/pp8-gpipe"
  else
    wl dp4 --workload dp --out "$PD/dp4"
    wl tp2dp2 --workload hybrid --tp 2 --dp 2 --out "$PD/tp2dp2"
    wl tp2pp2 --workload hybrid --tp 2 --pp 2 --schedule 1f1b --out "$PD/tp2pp2"
    wl pp4-1f1b --workload pp --schedule 1f1b --out "$PD/pp4-1f1b"
    wl pp4-gpipe --workload pp --schedule gpipe --out "$PD/pp4-gpipe"
  fi
}

# ---------------------------------------------------------------------------------------------
trap 'say "interrupted"; exit 130' INT TERM
log_start
failed=()
for p in "$@"; do
  PD=$OUT/$p
  rm -rf "$PD"
  mkdir -p "$PD"
  PHASE_RC=0
  t0=$SECONDS
  say "=== phase $p"
  "phase_$p"
  if [ "$PHASE_RC" -eq 0 ]; then
    say "=== phase $p: passed ($((SECONDS - t0)) s)"
  else
    say "=== phase $p: FAILED ($((SECONDS - t0)) s)"
    failed+=("$p")
  fi
done
if [ "${PACK:-0}" = 1 ]; then
  for p in "$@"; do
    [ -d "$OUT/$p" ] || continue
    tar -C "$OUT" -cJf "$OUT/$p.tar.xz" "$p" 2>>"$LOG" && rm -rf "${OUT:?}/$p"
  done
fi
if [ "${#failed[@]}" -eq 0 ]; then
  say "all phases passed ($*); log $LOG"
  exit 0
fi
say "FAILED phases: ${failed[*]}; log $LOG"
exit 1
