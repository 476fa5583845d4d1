// SPDX-License-Identifier: MIT
// Seeded uniform random numbers in [-1, 1), the same on the host and the device: element i of a
// matrix is a pure function of (seed, stream, i), so a fill needs no state, runs in parallel, and a
// host test can recompute any element. The mixer is SplitMix64's finaliser.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SGEMM_HOST_DEVICE __host__ __device__
#else
#define SGEMM_HOST_DEVICE
#endif

namespace sgemm {

SGEMM_HOST_DEVICE inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// stream separates the matrices (A, B, C) drawn from one seed.
SGEMM_HOST_DEVICE inline float uniform_pm1(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t bits = mix64(mix64(seed ^ (stream << 56)) + index);
  // The top 24 bits give every float in [0, 1) on a 2^-24 grid; never exactly 1.
  const float unit = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
  return 2.0f * unit - 1.0f;
}

}  // namespace sgemm
