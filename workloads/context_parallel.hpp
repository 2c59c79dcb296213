// SPDX-License-Identifier: MIT
// Context parallelism (--cp, --cp-mode) as Megatron-Core runs it through TransformerEngine: each
// CP rank holds s/cp tokens of every micro-batch, and attention is the one place the ranks of a
// CP group meet. What this file holds is the schedule's arithmetic: which sequence chunks a rank
// holds, which attention blocks it computes at each step, and what it sends; the StepBuilder
// (workloads/step_cp.cpp) turns them into ops. Formulas and citations: docs/workloads.md,
// "Context parallelism".
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/layout.hpp"
#include "workloads/model_shape.hpp"

namespace commprof {

/// TransformerEngine's cp_comm_type: `p2p` (AttnFuncWithCPAndKVP2P, a ring of K/V overlapped
/// with attention), `a2a` (AttnFuncWithCPAndQKVOA2A, DeepSpeed-Ulysses' all-to-alls), `allgather`
/// (AttnFuncWithCPAndKVAllGather, Megatron's "all_gather").
enum class CpMode { kP2p, kA2a, kAllGather };
CpMode parse_cp_mode(const std::string& text);
const char* cp_mode_name(CpMode m);

/// The two of the sequence's 2·cp chunks that CP rank `cp_rank` holds: `cp_rank` and
/// 2·cp − 1 − `cp_rank` (TE's get_seq_chunk_ids / Megatron's get_batch_on_this_cp_rank), so that
/// every rank has the same causal work.
std::array<int, 2> cp_chunks(int cp, int cp_rank);

/// One attention kernel of a CP rank: `q_seq` of its query tokens against `kv_seq` key/value
/// tokens, causal or full. `source` is the CP rank whose K/V it reads (p2p: the ring step's).
struct CpBlock {
  int q_seq = 0;
  int kv_seq = 0;
  bool causal = false;
  int source = 0;
};

/// p2p: the cp ring steps of CP rank `cp_rank` for a sequence of `seq` tokens (c = seq / 2cp, a
/// chunk). At step i the rank holds the K/V of rank (cp_rank − i) mod cp: step 0 its own two
/// chunks, causal over its 2c tokens; from an earlier rank (i ≤ cp_rank) both local Q chunks
/// against that rank's first chunk only (2c × c, full: its second chunk is later than both);
/// from a later rank (i > cp_rank) the local second Q chunk against both of its chunks (c × 2c,
/// full: the local first chunk is earlier than both).
std::vector<CpBlock> cp_ring_steps(int seq, int cp, int cp_rank);

/// allgather: the two kernels of CP rank `cp_rank` over the gathered K/V, one per local Q chunk
/// k ∈ {cp_rank, 2cp − 1 − cp_rank}: c queries against the (k + 1)·c keys up to its own chunk,
/// causal aligned bottom-right (the earlier chunks whole, its own chunk's diagonal).
std::vector<CpBlock> cp_allgather_blocks(int seq, int cp, int cp_rank);

/// Elements of one of K or V for the rank's tokens: b·(s/cp)·g·d, g the key/value heads on a TP
/// rank (kv_heads / tp), d the head dimension. A p2p ring step sends K and V together (TE's
/// p2p_comm_buffers), twice this; an allgather gathers each of K and V, this much per rank.
std::uint64_t cp_kv_elements(const ModelShape& shape, int tp, int cp);
/// Elements of one of Q or O for the rank's tokens: b·(s/cp)·(a/t)·d.
std::uint64_t cp_q_elements(const ModelShape& shape, int tp, int cp);

/// The model as one CP rank sees it outside attention: s/cp tokens of each micro-batch (every
/// GEMM, norm, activation, TP collective and the model's ends work on b·s/cp tokens).
ModelShape cp_local_shape(const ModelShape& shape, int cp);

/// The --dry-run lines of CP rank `cp_rank` ("" at cp 1): the mode, the chunks it holds, and per
/// layer and micro-batch each step's or kernel's lengths and each transfer's elements and bytes.
std::string cp_summary(const ModelShape& shape, const ParallelLayout& layout, CpMode mode,
                       int cp_rank);

/// Checks --cp against the sequence and the heads: p2p and allgather need s divisible by 2·cp
/// (TE's chunks), a2a by cp, and a2a the rank's key/value heads (kv_heads / tp) a multiple of cp
/// (DeepSpeed-Ulysses splits heads over the CP ranks; TE asserts the same); throws ConfigError
/// naming the numbers. Nothing to check at cp 1.
void validate_context_parallel(const ModelShape& shape, const ParallelLayout& layout, CpMode mode);

}  // namespace commprof
