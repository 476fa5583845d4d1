// SPDX-License-Identifier: MIT
// FP32 -> TF32 rounding, as chapter 08 teaches it (08_tensor_cores/README.md, "Rounding to
// TF32"). TF32 keeps FP32's sign and 8-bit exponent and 10 of its 23 mantissa bits; the tensor
// core reads the 19 high bits of each 32-bit operand and ignores the 13 low ones.
//
// Both functions round to nearest (ties away from zero) by adding half a TF32 unit (2^12 in the
// bit pattern) and leave Inf and NaN as they are. Neither ever turns a finite input into Inf:
// cvt.rna.tf32.f32 rounds every |x| >= kTf32RoundUpLimit (the last 4096 floats below Inf) up to
// Inf, where these functions truncate it (toward zero, one TF32 unit of error at most), so every
// finite float stays finite.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace sgemm {

// The smallest float whose round-to-nearest TF32 value is Inf: 0x7F7FF000, (2 - 2^-11) * 2^127.
inline constexpr uint32_t kTf32RoundUpLimit = 0x7F7FF000u;

// x as a tensor-core operand: rounded, with the 13 low bits left as the add made them (the tensor
// core ignores them). Two instructions on sm_90 (a compare with a free |x| and a predicated add),
// one fewer than cvt.rna's three. Use it only where the result goes straight to an mma.
__device__ __forceinline__ uint32_t tf32_operand(float x) {
  uint32_t r = __float_as_uint(x);
  if (fabsf(x) < __uint_as_float(kTf32RoundUpLimit)) r += 0x1000u;
  return r;
}

// x rounded to the nearest TF32 value, as a float: the 13 low bits are zero, so x - tf32_value(x)
// is exact in FP32 (chapter 09's split needs that). Three instructions, as cvt.rna.
__device__ __forceinline__ float tf32_value(float x) {
  uint32_t r = __float_as_uint(x);
  if (fabsf(x) < __uint_as_float(kTf32RoundUpLimit)) r += 0x1000u;
  return __uint_as_float(r & 0xFFFFE000u);
}

}  // namespace sgemm
