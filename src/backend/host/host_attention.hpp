// SPDX-License-Identifier: MIT
// AttentionCall on a CPU core: the forward (softmax statistics and context) and the backward (the
// gradients of Q, K and V) of scaled dot-product attention, exactly as defined, over real
// memory in the layouts of src/backend/work.hpp. Nothing is fused or tiled: a CPU has no
// on-chip memory to spare the s × s scores, so each row's scores are computed where used.
#pragma once

#include "src/backend/work.hpp"

namespace commprof {

/// Throws Error for a dtype other than float and double (what the host backend computes in).
void host_attention(const AttentionCall& call);

}  // namespace commprof
