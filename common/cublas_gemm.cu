// SPDX-License-Identifier: MIT
#include "common/cublas_gemm.h"

#include "common/check.h"

namespace sgemm {

const char* cublas_mode_name(CublasMode mode) {
  return mode == CublasMode::kTf32 ? "cuBLAS TF32 (cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32)"
                                   : "cuBLAS FP32 (cublasGemmEx, CUBLAS_COMPUTE_32F, TF32 off)";
}

// Row-major C = alpha*A*B + beta*C through column-major cuBLAS: a row-major matrix is the
// column-major view of its transpose, so compute C^T = B^T * A^T, i.e. swap the operands and
// m with n; no data moves.
void cublas_gemm(cublasHandle_t handle, const Problem& p, const float* A, const float* B, float* C,
                 CublasMode mode) {
  const cublasComputeType_t compute =
      mode == CublasMode::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &p.alpha, B,
                            CUDA_R_32F, p.n, A, CUDA_R_32F, p.k, &p.beta, C, CUDA_R_32F, p.n,
                            compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace sgemm
