// SPDX-License-Identifier: MIT
// The vocabulary of work a backend runs: plain data, so an op plan can be printed, tested and
// replayed on any backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "src/backend/collective_kind.hpp"
#include "src/core/dtype.hpp"

namespace commprof {

class Communicator;

/// A collective over `comm` with NCCL's argument semantics (see CollectiveSpec for what
/// `count` means per kind). Out-of-place unless send == recv.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  Communicator* comm = nullptr;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  DType dtype = DType::kFloat32;
  int root = 0;  ///< broadcast and reduce
};

/// Point-to-point within `comm`: send `count` elements to `send_peer` and/or receive as many
/// from `recv_peer` (either may be -1), as one group (ncclGroupStart/End, or MPI Isend/Irecv +
/// Waitall), which is how Megatron's pipeline pairs a send with a receive without deadlock.
struct P2PCall {
  Communicator* comm = nullptr;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  DType dtype = DType::kFloat32;
  int send_peer = -1;
  int recv_peer = -1;
};

/// A memory-bound pass: reads `read_bytes` from `src` and writes `write_bytes` to `dst`, each in
/// order, with no more arithmetic than moving them needs (the values read are folded into what
/// is written, so no read can be skipped). What an element-wise op, a normalisation or an
/// optimizer step costs on a GPU is the bytes it moves: the planner gives each such op the bytes
/// PyTorch's kernels for it move (docs/workloads.md). Byte counts are rounded up to 16 (the
/// vector width). The buffers may be smaller than the bytes moved (an optimizer step streams
/// every parameter, gradient and moment: tens of GB): the pass then wraps around them, which
/// costs the same memory traffic as long as a buffer is larger than the GPU's L2 cache. Their
/// sizes are multiples of 16.
struct ElementwiseCall {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  const void* src = nullptr;
  std::uint64_t src_bytes = 0;
  void* dst = nullptr;
  std::uint64_t dst_bytes = 0;
};

/// The vector width of an ElementwiseCall: byte counts are rounded up to a multiple of it.
inline constexpr std::uint64_t kElementwiseVector = 16;
inline constexpr std::uint64_t elementwise_span(std::uint64_t bytes) {
  return (bytes + kElementwiseVector - 1) / kElementwiseVector * kElementwiseVector;
}

/// C = A·B, column-major as cuBLAS: A is m×k, B is k×n, C is m×n.
struct GemmCall {
  int m = 0;
  int n = 0;
  int k = 0;
  DType dtype = DType::kFloat32;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  double flops() const { return 2.0 * m * n * k; }
};

/// Arithmetic for a set time, where only a step's compute time is known, not its shapes (a mock
/// calibrated from a real trace): the backend runs fused multiply-adds on all its compute units
/// for about `ns` nanoseconds. On a GPU the work is fixed when the op is issued (iterations from
/// the backend's own measurement of its rate), so a kernel that shares the SMs with NCCL's takes
/// longer, as a real layer's would.
struct ComputeCall {
  std::uint64_t ns = 0;
};

enum class CopyKind : std::uint8_t { kHostToDevice, kDeviceToHost, kDeviceToDevice };

struct CopyCall {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  CopyKind kind = CopyKind::kDeviceToDevice;
};

struct MemsetCall {
  void* dst = nullptr;
  int value = 0;
  std::size_t bytes = 0;
};

using Work = std::variant<GemmCall, CollectiveCall, P2PCall, CopyCall, MemsetCall, ElementwiseCall,
                          ComputeCall>;

/// What tools see of an op: the NVTX range name and payload, the log and error lines.
struct OpLabel {
  std::string name;
  std::uint64_t bytes = 0;
  double flops = 0.0;
  std::int64_t seq = -1;  ///< the collective's per-communicator sequence number, if any
  /// Non-zero: the backend records when this op's work runs (ActivityRecorder::span). Unique
  /// within the run, so late records of an earlier step can never be taken for this op's.
  std::uint64_t activity_tag = 0;
};

}  // namespace commprof
