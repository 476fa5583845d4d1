// SPDX-License-Identifier: MIT
// Seeded random inputs, the same on the host and the device: element i of a matrix is a pure
// function of (seed, stream, i), so a fill needs no state, runs in parallel, and a host test can
// recompute any element. The mixer is SplitMix64's finaliser. Four distributions (--dist):
//   uniform  in [-1, 1) (the default);
//   normal   mean 0, variance 1 (Box-Muller on two 24-bit uniforms);
//   wide     random sign, mantissa in [1, 2), exponent uniform in [-20, 20]: magnitudes spread over
//            2^-20 .. 2^21, so products and sums meet very different scales (the case where an
//            error bound relative to the result's rms says least);
//   extreme  far ends of the float range, per matrix: A's elements in +-[2^127, 2^128) (FLT_MAX/2
//            .. FLT_MAX), B's in +-[2^-113, 2^-112), C0 uniform. Every product lies in
//            +-[2^14, 2^16) and every sum is finite, so a correct kernel gives an ordinary result;
//            one that rounds, splits or scales an input past FLT_MAX (to Inf), or loses B's low
//            bits, does not. (B's binade lies just above 2^-114, below which chapter 09's TF32
//            split no longer keeps FP32's accuracy: 09_3xtf32/README.md, "The range".)
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define SGEMM_HOST_DEVICE __host__ __device__
#else
#define SGEMM_HOST_DEVICE
#endif

namespace sgemm {

enum class Distribution { kUniform, kNormal, kWide, kExtreme };

// The `stream` of each matrix: it picks the matrix's own random numbers (and for kExtreme, their
// range).
inline constexpr uint64_t kStreamA = 1;
inline constexpr uint64_t kStreamB = 2;
inline constexpr uint64_t kStreamC0 = 3;  // the start value of C when beta != 0

inline constexpr int kWideMinExponent = -20;
inline constexpr int kWideMaxExponent = 20;
inline constexpr int kExtremeExponentA = 127;   // the largest binade: FLT_MAX = (2 - 2^-23) 2^127
inline constexpr int kExtremeExponentB = -113;  // tiny, but above 09's accuracy limit 2^-114

SGEMM_HOST_DEVICE inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// 64 random bits for element `index` of the matrix `stream` (A, B, C) drawn from `seed`.
SGEMM_HOST_DEVICE inline uint64_t random_bits(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix64(mix64(seed ^ (stream << 56)) + index);
}

// The top 24 bits give every float in [0, 1) on a 2^-24 grid; never exactly 1.
SGEMM_HOST_DEVICE inline float unit_from_bits(uint64_t bits24) {
  return static_cast<float>(bits24) * (1.0f / 16777216.0f);
}

// A random sign and a mantissa in [1, 2) from `bits`, times 2^exponent: exact (a power-of-two
// scaling), and finite for every exponent up to 127.
SGEMM_HOST_DEVICE inline float signed_in_binade(uint64_t bits, int exponent) {
  const float mantissa = 1.0f + static_cast<float>(bits & 0x7FFFFF) * (1.0f / 8388608.0f);
  const float magnitude = ldexpf(mantissa, exponent);
  return (bits >> 63) ? -magnitude : magnitude;
}

SGEMM_HOST_DEVICE inline float uniform_pm1(uint64_t seed, uint64_t stream, uint64_t index) {
  return 2.0f * unit_from_bits(random_bits(seed, stream, index) >> 40) - 1.0f;
}

SGEMM_HOST_DEVICE inline float draw(Distribution dist, uint64_t seed, uint64_t stream,
                                    uint64_t index) {
  const uint64_t bits = random_bits(seed, stream, index);
  switch (dist) {
    case Distribution::kNormal: {
      // u1 in (0, 1] so the logarithm is finite; u2 in [0, 1).
      const float u1 = 1.0f - unit_from_bits(bits >> 40);
      const float u2 = unit_from_bits((bits >> 16) & 0xFFFFFF);
      return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2);
    }
    case Distribution::kWide: {
      constexpr int kSpan = kWideMaxExponent - kWideMinExponent + 1;
      const int exponent = kWideMinExponent + static_cast<int>((bits >> 32) % kSpan);
      return signed_in_binade(bits, exponent);
    }
    case Distribution::kExtreme:
      if (stream == kStreamA) return signed_in_binade(bits, kExtremeExponentA);
      if (stream == kStreamB) return signed_in_binade(bits, kExtremeExponentB);
      return 2.0f * unit_from_bits(bits >> 40) - 1.0f;
    case Distribution::kUniform:
    default:
      return 2.0f * unit_from_bits(bits >> 40) - 1.0f;
  }
}

}  // namespace sgemm
