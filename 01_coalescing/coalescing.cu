// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 01: global-memory coalescing.
//
//   00 naive -> [01 coalescing] -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> 08 tensor cores
//   -> 09 3xTF32
//
// The kernel of chapter 00 with one change: threadIdx.x now walks the COLUMNS of C. The 32
// threads of a warp read 32 consecutive floats of a row of B (four 32-byte sectors, one cache
// line) and write 32 consecutive floats of C, while A[row][i] is one address for the whole warp
// (a broadcast). Same arithmetic, same bytes requested, far fewer sectors per request.
// Blocks run in plain row-by-row order. A second idea, the order in which blocks start (grouped
// so that the L2 holds what neighbours share), is a measured variant of this file:
// SGEMM_GROUP_ROWS, README.md, "Which blocks run together".
// Limits: still no data reuse beyond what the caches find (0.25 FLOP per byte requested); every
// FMA needs two load instructions, so the L1 load path caps it.
// Example: build/bin/01_coalescing --size 4096

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "common/grid.h"
#include "common/harness.h"

// Block shape (x, y), chosen on the H100: README.md, "Choosing the block". The tuning build
// (-DSGEMM_TUNING=ON) compiles this file again with other SGEMM_TILE values.
// A warp is one row of the block, 32 consecutive columns of C; the warps of a block work on the
// same 32 columns and share each cache line of B in L1.
#ifndef SGEMM_TILE
#define SGEMM_TILE 32, 32
#endif
// Block rows visited together (README.md, "Which blocks run together"). 1: plain row-by-row
// order, this chapter's kernel; the tuning build's variants grouped4/8/16 measure the grouped
// order.
#ifndef SGEMM_GROUP_ROWS
#define SGEMM_GROUP_ROWS 1
#endif

struct BlockShape {
  int x;  // threads along the columns of C (the fast index of a warp)
  int y;  // threads along the rows of C
};
constexpr BlockShape kBlock{SGEMM_TILE};
constexpr int kBlockDimX = kBlock.x;
constexpr int kBlockDimY = kBlock.y;
constexpr int kGroupRows = SGEMM_GROUP_ROWS;
constexpr int kThreads = kBlockDimX * kBlockDimY;
static_assert(kBlockDimX == 32, "a warp must cover 32 consecutive columns to coalesce fully");
static_assert(kThreads <= 1024, "a block holds at most 1024 threads");
static_assert(kGroupRows >= 1, "a group holds at least one row of blocks");

// The order in which blocks start decides which lines of A and B the L2 (50 MB) still holds when
// a neighbour asks for them. Row-by-row (kGroupRows == 1), one wave of 2 x 132 resident blocks
// spans a whole row of blocks at 8192^3 and reads all of B (256 MB) from DRAM for every 32 rows
// of C. Grouped, the wave covers kGroupRows rows of blocks by a few dozen columns, so the strips
// of A and B it reads stay in L2 while the wave's blocks share them. Block b runs the tile at
// (row, col) walking down a group of kGroupRows block rows first, then across. Only the order
// changes: every tile is still computed exactly once.
__device__ __forceinline__ void block_origin(int* block_row, int* block_col) {
  if constexpr (kGroupRows == 1) {
    *block_row = blockIdx.y;
    *block_col = blockIdx.x;
    return;
  }
  const int b = blockIdx.y * gridDim.x + blockIdx.x;
  const int per_group = kGroupRows * gridDim.x;
  const int first_row = b / per_group * kGroupRows;
  const int rows_in_group = min(kGroupRows, static_cast<int>(gridDim.y) - first_row);
  const int in_group = b % per_group;
  *block_row = first_row + in_group % rows_in_group;
  *block_col = in_group / rows_in_group;
}

// The kernel needs about 30 registers, so the SM's 64K registers never limit occupancy: every
// thread slot of the SM can hold a warp, and the many warps hide the latency of the loads.
__global__ void __launch_bounds__(kThreads)
    sgemm_coalesced(int m, int n, int k, float alpha, const float* __restrict__ A,
                    const float* __restrict__ B, float beta, float* __restrict__ C) {
  int block_row, block_col;
  block_origin(&block_row, &block_col);
  // threadIdx.x -> column: neighbouring threads of a warp get neighbouring COLUMNS of C.
  // 64-bit because block_col * 32 + 31 may pass INT_MAX when n is close to it.
  const int64_t col = static_cast<int64_t>(block_col) * kBlockDimX + threadIdx.x;
  const int row = block_row * kBlockDimY + threadIdx.y;  // < 65535 * 32: the launcher's slabs
  if (row >= m || col >= n) return;

  // Main loop: a_row[i] is one address for the whole warp (a broadcast, one sector); b_col[i*n]
  // is 32 consecutive floats across the warp (one 128-byte line, four sectors).
  const float* a_row = A + static_cast<int64_t>(row) * k;
  const float* b_col = B + col;
  float acc = 0.0f;
  for (int i = 0; i < k; ++i) {
    acc += a_row[i] * b_col[static_cast<int64_t>(i) * n];
  }

  // Epilogue: with beta == 0, C is never read (it may hold NaN: BLAS semantics). The warp writes
  // 32 consecutive floats: one line, four sectors.
  float* c = C + static_cast<int64_t>(row) * n + col;
  *c = (beta != 0.0f) ? alpha * acc + beta * *c : alpha * acc;
}

void launch_coalesced(const sgemm::Problem& p, const float* A, const float* B, float* C,
                      cudaStream_t stream) {
  const dim3 block(kBlockDimX, kBlockDimY);
  // Rows of blocks go on gridDim.y (at most 65535): a taller C runs as several row slabs.
  sgemm::for_each_row_slab(p, kBlockDimY, [&](int64_t row0, int rows) {
    const dim3 grid(sgemm::ceil_div(p.n, kBlockDimX), sgemm::ceil_div(rows, kBlockDimY));
    sgemm_coalesced<<<grid, block, 0, stream>>>(rows, p.n, p.k, p.alpha, A + row0 * p.k, B, p.beta,
                                                C + row0 * p.n);
  });
}

int main(int argc, char** argv) {
  // Traffic model: tile 1 x 1, as in chapter 00. Coalescing changes how many sectors each request
  // touches, not how many bytes the threads ask for.
  // The title carries the block order, so the tuning variants tell themselves apart.
  static const std::string title =
      std::string("coalesced: one thread per element, threadIdx.x on columns, block ") +
      std::to_string(kBlockDimX) + "x" + std::to_string(kBlockDimY) +
      (kGroupRows == 1 ? ", row-by-row order"
                       : ", grouped order of " + std::to_string(kGroupRows) + " block rows");
  const sgemm::Chapter chapter{"01_coalescing", title.c_str(), &launch_coalesced, 1, 1};
  return sgemm::run_chapter(chapter, argc, argv);
}
