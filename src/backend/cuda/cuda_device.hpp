// SPDX-License-Identifier: MIT
// Which GPU a rank uses: one per rank, by local rank; the only one when the launcher gave the
// rank exactly one (srun --gpus-per-task, CUDA_VISIBLE_DEVICES).
#pragma once

#include <optional>
#include <string>

namespace commprof {

/// Number of visible CUDA devices, or the reason there is none (usable before MPI_Init).
struct VisibleDevices {
  int count = 0;
  std::string problem;  ///< empty when count > 0
};
VisibleDevices visible_cuda_devices();

/// The device for `local_rank` of `local_size` ranks on a host that sees `visible` GPUs, or
/// nullopt when there are more local ranks than GPUs (a message names the numbers).
std::optional<int> choose_device(int local_rank, int local_size, int visible, std::string* why);

}  // namespace commprof
