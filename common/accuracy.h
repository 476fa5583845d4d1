// SPDX-License-Identifier: MIT
// How right is C: an FP64 reference of the same inputs on the GPU, a chapter's (or cuBLAS's)
// errors against it, and a bit-for-bit comparison of two results (the determinism check).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/error_stats.h"
#include "common/harness.h"
#include "common/resources.h"

namespace sgemm {

// C64 = alpha*A*B + beta*C0 in double, and the error scale s = |alpha| |A|·|B| + |beta| |C0|,
// through two cublasDgemm calls on double copies of the inputs (the products of floats are exact
// in double, and the double sums round 2^29 times finer than FP32's).
class Fp64Reference {
 public:
  // Device memory the reference holds at its peak (double copies of A and B, C64 and s).
  static size_t bytes_needed(const Problem& p);

  // C0: the start value of C when beta != 0 (else null).
  Fp64Reference(cublasHandle_t handle, cudaStream_t stream, const Problem& p, const float* A,
                const float* B, const float* C0);

  // Writes C64 rounded to float into out (for --reference fp64).
  void round_to_float(float* out, cudaStream_t stream) const;

  // The errors of a float result C (m x n, on the device) against C64.
  ErrorStats errors_of(const float* C, cudaStream_t stream) const;

 private:
  int64_t count_;  // m * n
  DeviceBuffer<double> c64_;
  DeviceBuffer<double> scale_;
};

// Elements whose bits differ between two device arrays of count floats (0: bit-identical).
int64_t count_bit_differences(const float* x, const float* y, int64_t count, cudaStream_t stream);

}  // namespace sgemm
