// SPDX-License-Identifier: MIT
// cuBLAS, as the harness calls it: the reference a chapter is verified against and the speed it is
// compared with. Two modes, one per precision contract (common/harness.h).
#pragma once

#include <cublas_v2.h>

#include "common/harness.h"

namespace sgemm {

// kFp32: CUBLAS_COMPUTE_32F, every multiply-add in FP32 (TF32 off).
// kTf32: CUBLAS_COMPUTE_32F_FAST_TF32, inputs rounded to TF32 on the tensor cores.
enum class CublasMode { kFp32, kTf32 };

// The cuBLAS mode of a precision contract's accuracy class: what "% of cuBLAS" compares with.
inline CublasMode cublas_mode_for(Precision precision) {
  return precision == Precision::kTf32 ? CublasMode::kTf32 : CublasMode::kFp32;
}

const char* cublas_mode_name(CublasMode mode);  // "cuBLAS FP32 (CUBLAS_COMPUTE_32F, TF32 off)"

// Row-major C = alpha*A*B + beta*C (the problem's alpha and beta) on the handle's stream.
void cublas_gemm(cublasHandle_t handle, const Problem& p, const float* A, const float* B, float* C,
                 CublasMode mode);

}  // namespace sgemm
