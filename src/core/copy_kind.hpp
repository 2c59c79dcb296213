// SPDX-License-Identifier: MIT
// The direction of a copy (CopyCall, src/backend/work.hpp), below the backend so that plans can
// name it without one.
#pragma once

#include <cstdint>

namespace commprof {

enum class CopyKind : std::uint8_t { kHostToDevice, kDeviceToHost, kDeviceToDevice };

}  // namespace commprof
