// SPDX-License-Identifier: MIT
// AdamwCall on a CPU core: the update of every element of the flat parameter list over real
// memory, regions as src/backend/work.hpp lays them out. A CPU has no launches to cut, so the
// tensor list only gives the element count.
#pragma once

#include "src/backend/work.hpp"

namespace commprof {

/// Throws Error for a dtype other than float and double (what the host backend computes in).
void host_adamw(const AdamwCall& call);

}  // namespace commprof
