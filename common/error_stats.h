// SPDX-License-Identifier: MIT
// How far a computed C lies from the exact product, measured against an FP64 GEMM of the same
// inputs (common/accuracy.cu). Plain data for the report. docs/methodology.md, "Accuracy".
#pragma once

#include <cstdint>

namespace sgemm {

struct ErrorStats {
  // Relative to the size of the result: ||C - C64||_F / ||C64||_F (the rms error over the rms of
  // C) and max |C - C64| / rms(C64).
  double rms_rel_c = 0.0;
  double max_rel_c = 0.0;
  // Per element, relative to the scale its rounding error can reach,
  // s_ij = |alpha| (|A|·|B|)_ij + |beta| |C0_ij| (the standard dot-product bound's factor):
  // the rms and the max over the elements of |C - C64|_ij / s_ij.
  double rms_rel_ab = 0.0;
  double max_rel_ab = 0.0;
  int64_t nonfinite = 0;  // NaN or Inf elements of C (left out of the figures above)
};

}  // namespace sgemm
