// SPDX-License-Identifier: MIT
// Launch arithmetic that is no chapter's idea: ceil_div, the grid-y limit, the row-slab loop
// that lets a launcher whose block rows go on gridDim.y handle any M, and the SM count a launcher
// that picks its tile by the number of blocks compares with. Every chapter's launcher uses these;
// the chapters' own ideas stay in the chapters.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "common/harness.h"

#if defined(__CUDACC__)
#define SGEMM_GRID_HD __host__ __device__
#else
#define SGEMM_GRID_HD
#endif

namespace sgemm {

// gridDim.y and gridDim.z are limited to 65535 blocks (gridDim.x to 2^31 - 1).
inline constexpr int kMaxGridY = 65535;

// ceil(a / b) for a >= 1 that cannot overflow, unlike (a + b - 1) / b near INT_MAX.
SGEMM_GRID_HD constexpr int ceil_div(int a, int b) { return (a - 1) / b + 1; }

// A slab of rows of C is itself a GEMM (same B, same K and N): a C taller than the grid's 65535
// block rows runs as several launches, A and C advanced by the slab's rows. launch(row0, rows) is
// called once per slab, in order; for every M below 65535 * block_rows exactly once.
template <class Launch>
void for_each_row_slab(const Problem& p, int block_rows, Launch&& launch) {
  const int64_t slab_rows = static_cast<int64_t>(kMaxGridY) * block_rows;
  for (int64_t row0 = 0; row0 < p.m; row0 += slab_rows) {
    const int64_t left = p.m - row0;
    launch(row0, static_cast<int>(left < slab_rows ? left : slab_rows));
  }
}

// The SM count of the GPU this process runs on (the harness makes the chosen device current
// before any launch), read once.
inline int sm_count() {
  static const int sms = [] {
    int device = 0, count = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
    return count;
  }();
  return sms;
}

}  // namespace sgemm

#undef SGEMM_GRID_HD
