// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 00: the naive kernel.
//
//   [00 naive] -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> 08 tensor cores
//   -> 09 3xTF32
//
// One thread computes one element of C = alpha * A * B + beta * C by walking a row of A and a
// column of B straight from global memory. The mapping is the one most first attempts write:
// threadIdx.x walks the ROWS of C. The 32 threads of a warp then read A at a stride of K floats
// and write C at a stride of N floats, so every load of A and every store of C touches 32
// different memory sectors. Chapter 01 swaps the mapping and nothing else.
// Limits: no data reuse at all (0.25 FLOP per byte of global traffic); slow on purpose.
// Example: build/bin/00_naive --size 1024

#include <cstdint>

#include <cuda_runtime.h>

#include "common/grid.h"
#include "common/harness.h"

// A 32 x 32 block: 1024 threads, the most a block may hold, and a warp spans 32 rows of C.
constexpr int kBlockDimX = 32;  // threads along the rows of C (the fast index of a warp)
constexpr int kBlockDimY = 32;  // threads along the columns of C
constexpr int kThreads = kBlockDimX * kBlockDimY;
static_assert(kBlockDimX == 32, "one warp must lie along the rows of C to show the problem");
static_assert(kThreads <= 1024, "a block holds at most 1024 threads");

// The kernel needs about 30 registers, so registers never limit occupancy: every thread slot of
// the SM can hold a warp. Chapter 01 uses the same bounds, so the two kernels differ only in their
// mapping.
__global__ void __launch_bounds__(kThreads)
    sgemm_naive(int m, int n, int k, float alpha, const float* __restrict__ A,
                const float* __restrict__ B, float beta, float* __restrict__ C) {
  // threadIdx.x -> row: neighbouring threads of a warp get neighbouring ROWS of C. 64-bit so
  // that the products with the leading dimensions below cannot overflow.
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= m) return;
  const float* a_row = A + row * k;  // this thread's row of A; a warp holds 32 rows, K apart

  // threadIdx.y -> column. A grid-stride loop: a C wider than 65535 * 32 columns needs more
  // blocks along y than a grid may have; for every other shape it runs exactly once.
  const int64_t col_stride = static_cast<int64_t>(gridDim.y) * blockDim.y;
  for (int64_t col = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; col < n;
       col += col_stride) {
    // Main loop: a_row[i] is a different row (a different 32-byte sector) for each lane of the
    // warp; B[i][col] is the same address for the whole warp (one broadcast).
    float acc = 0.0f;
    const float* b_col = B + col;
    for (int i = 0; i < k; ++i) {
      acc += a_row[i] * b_col[static_cast<int64_t>(i) * n];
    }

    // Epilogue: with beta == 0, C is never read (it may hold NaN: BLAS semantics).
    float* c = C + row * n + col;  // the warp writes 32 rows: 32 sectors per store
    *c = (beta != 0.0f) ? alpha * acc + beta * *c : alpha * acc;
  }
}

void launch_naive(const sgemm::Problem& p, const float* A, const float* B, float* C,
                  cudaStream_t stream) {
  const dim3 block(kBlockDimX, kBlockDimY);
  // Columns go on gridDim.y (at most 65535 blocks): a wider C loops over the grid in the kernel.
  const int blocks_y = sgemm::ceil_div(p.n, kBlockDimY);
  const dim3 grid(sgemm::ceil_div(p.m, kBlockDimX),
                  blocks_y < sgemm::kMaxGridY ? blocks_y : sgemm::kMaxGridY);
  sgemm_naive<<<grid, block, 0, stream>>>(p.m, p.n, p.k, p.alpha, A, B, p.beta, C);
}

int main(int argc, char** argv) {
  // Traffic model: tile 1 x 1. Every thread reads its K elements of A and of B itself.
  const sgemm::Chapter chapter{"00_naive", "naive: one thread per element, threadIdx.x on rows",
                               &launch_naive, 1, 1};
  return sgemm::run_chapter(chapter, argc, argv);
}
