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
// Host code may include this header too (tests/host/tf32_test.cpp checks the split on every float).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define SGEMM_TF32_HD __host__ __device__ __forceinline__
#else
#define SGEMM_TF32_HD inline
#endif

namespace sgemm {

SGEMM_TF32_HD uint32_t tf32_bits_of(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

SGEMM_TF32_HD float tf32_float_of(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

// The smallest float whose round-to-nearest TF32 value is Inf: 0x7F7FF000, (2 - 2^-11) * 2^127.
inline constexpr uint32_t kTf32RoundUpLimit = 0x7F7FF000u;

// x as a tensor-core operand: rounded, with the 13 low bits left as the add made them (the tensor
// core ignores them). Two instructions on sm_90 (a compare with a free |x| and a predicated add),
// one fewer than cvt.rna's three. Use it only where the result goes straight to an mma.
SGEMM_TF32_HD uint32_t tf32_operand(float x) {
  uint32_t r = tf32_bits_of(x);
  if (std::fabs(x) < tf32_float_of(kTf32RoundUpLimit)) r += 0x1000u;
  return r;
}

// x rounded to the nearest TF32 value, as a float: the 13 low bits are zero, so x - tf32_value(x)
// is exact in FP32 (chapter 09's split needs that). Three instructions, as cvt.rna.
SGEMM_TF32_HD float tf32_value(float x) {
  return tf32_float_of(tf32_operand(x) & 0xFFFFE000u);
}

// x as two tensor-core operands, big + small, as chapter 09 teaches it (09_3xtf32/README.md, "The
// split"): within 2^-23 |x| wherever |x| >= 2^-114. big = tf32_value(x), so x - big is exact in
// FP32 and big never overflows. small = x - big rounded for the tensor core by adding half a TF32
// unit to its bit pattern: nothing subtracts small, so its low bits may stay as the add left them.
// tf32_operand's guard against rounding up to Inf is dead here (5 instructions per value instead
// of 6): for finite x, x - big is at most 2^-11 |x| <= 2^117, far below the exponent 0xFF; for
// x - big = +-0 (and zero-filled elements) the add gives a pattern whose 19 high bits are +-0.
struct Tf32Split {
  uint32_t big;
  uint32_t small;
};
SGEMM_TF32_HD Tf32Split split_tf32(float x) {
  const float big = tf32_value(x);
  return {tf32_bits_of(big), tf32_bits_of(x - big) + 0x1000u};
}

}  // namespace sgemm

#undef SGEMM_TF32_HD
