# SPDX-License-Identifier: MIT
"""The classes torch_step.py sums a PyTorch step's kernels into, by kernel name (PyTorch 2.11 with
cuBLAS and cuDNN on Hopper: GEMMs are nvjet/cutlass/sm90 kernels, attention cuDNN's SDPA)."""
import re


def kernel_class(name):
    n = name.lower()
    # cuDNN's SDPA helpers (compute_dot_do_o, convert_dq_to_16bits) belong to attention too.
    if re.search(r"flash|fmha|attention|sdpa|cudnn", n):
        return "attention"
    if re.search(r"adam|multi_tensor", n):
        return "optimizer"
    if re.search(r"gemm|cutlass|xmma|nvjet|cublas|sm90_|matmul", n):
        return "gemm"
    return "other"
