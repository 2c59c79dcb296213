// SPDX-License-Identifier: MIT
// Checked calls at the CUDA, cuBLAS and NCCL boundary: a failure throws DeviceError naming the
// call, file:line, rank, host and the library's own error text (plus ncclGetLastError()).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

namespace commprof::detail {
[[noreturn]] void throw_cuda_error(const char* call, const char* file, int line, cudaError_t rc);
[[noreturn]] void throw_cublas_error(const char* call, const char* file, int line,
                                     cublasStatus_t rc);
[[noreturn]] void throw_nccl_error(const char* call, const char* file, int line, ncclResult_t rc);
}  // namespace commprof::detail

#define COMMPROF_CUDA_CHECK(call)                                                         \
  do {                                                                                    \
    const cudaError_t commprof_cuda_rc_ = (call);                                         \
    if (commprof_cuda_rc_ != cudaSuccess) {                                               \
      ::commprof::detail::throw_cuda_error(#call, __FILE__, __LINE__, commprof_cuda_rc_); \
    }                                                                                     \
  } while (0)

#define COMMPROF_CUBLAS_CHECK(call)                                                           \
  do {                                                                                        \
    const cublasStatus_t commprof_cublas_rc_ = (call);                                        \
    if (commprof_cublas_rc_ != CUBLAS_STATUS_SUCCESS) {                                       \
      ::commprof::detail::throw_cublas_error(#call, __FILE__, __LINE__, commprof_cublas_rc_); \
    }                                                                                         \
  } while (0)

#define COMMPROF_NCCL_CHECK(call)                                                         \
  do {                                                                                    \
    const ncclResult_t commprof_nccl_rc_ = (call);                                        \
    if (commprof_nccl_rc_ != ncclSuccess && commprof_nccl_rc_ != ncclInProgress) {        \
      ::commprof::detail::throw_nccl_error(#call, __FILE__, __LINE__, commprof_nccl_rc_); \
    }                                                                                     \
  } while (0)
