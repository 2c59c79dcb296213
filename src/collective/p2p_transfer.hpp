// SPDX-License-Identifier: MIT
// The sends and receives of a point-to-point group (P2PCall, src/backend/work.hpp): plain data
// below the backend, so that pipeline schedules and plans can name them without one.
#pragma once

#include <array>

namespace commprof {

/// One send or receive of a P2PCall: to or from `peer` (a rank of the communicator; -1: none),
/// carrying activations (`forward`) or their gradients. Transfers match only transfers of their
/// own direction, so an activation and a gradient between the same two ranks in one group (a
/// two-stage interleaved pipeline sends both ways to one peer) cannot be taken for each other.
struct P2PTransfer {
  int peer = -1;
  bool forward = true;
};

/// How many of `transfers` are used (peer >= 0).
inline int used(const std::array<P2PTransfer, 2>& transfers) {
  return (transfers[0].peer >= 0 ? 1 : 0) + (transfers[1].peer >= 0 ? 1 : 0);
}
/// "sendrecv", "send" or "recv": how records and NVTX ranges name a P2P group.
inline const char* p2p_name(const std::array<P2PTransfer, 2>& sends,
                            const std::array<P2PTransfer, 2>& recvs) {
  return used(sends) > 0 && used(recvs) > 0 ? "sendrecv" : used(sends) > 0 ? "send" : "recv";
}

}  // namespace commprof
