// SPDX-License-Identifier: MIT
#include "src/backend/cuda/cuda_check.hpp"

#include <string>

#include "src/core/errors.hpp"

namespace commprof::detail {

void throw_cuda_error(const char* call, const char* file, int line, cudaError_t rc) {
  // Clears a non-sticky error so that the next call does not report it again.
  (void)cudaGetLastError();
  throw DeviceError(describe_failure(
      call, file, line, std::string(cudaGetErrorName(rc)) + ": " + cudaGetErrorString(rc)));
}

void throw_cublas_error(const char* call, const char* file, int line, cublasStatus_t rc) {
  throw DeviceError(describe_failure(
      call, file, line, std::string(cublasGetStatusName(rc)) + ": " + cublasGetStatusString(rc)));
}

void throw_nccl_error(const char* call, const char* file, int line, ncclResult_t rc) {
  std::string detail = ncclGetErrorString(rc);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && *last != '\0') detail += std::string(" (") + last + ")";
  throw DeviceError(describe_failure(call, file, line, detail));
}

}  // namespace commprof::detail
