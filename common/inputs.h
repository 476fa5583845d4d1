// SPDX-License-Identifier: MIT
// The seeded inputs on the device: fills a matrix from common/fill.h's distributions.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/fill.h"

namespace sgemm {

// Matrix `stream` (1: A, 2: B, 3: the start value of C) of `count` elements, on stream s.
void fill_device(float* data, int64_t count, Distribution dist, uint64_t seed, uint64_t stream,
                 cudaStream_t s);

}  // namespace sgemm
