// SPDX-License-Identifier: MIT
// The seeded inputs on the device: fills a matrix from common/fill.h's distributions.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/fill.h"

namespace sgemm {

// Matrix `stream` (kStreamA, kStreamB or kStreamC0: common/fill.h) of `count` elements, on the
// CUDA stream s.
void fill_device(float* data, int64_t count, Distribution dist, uint64_t seed, uint64_t stream,
                 cudaStream_t s);

}  // namespace sgemm
