// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 02: block tiling through shared memory.
//
//   00 naive -> 01 coalescing -> [02 smem tiling] -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> 08 tensor cores
//   -> 09 3xTF32
//
// Chapter 01 read every element of A and B from global memory once per thread that used it.
// Here a block of kBlockM x kBlockN threads computes a kBlockM x kBlockN tile of C and walks K
// one kBlockK-wide slice at a time: the block first copies the kBlockM x kBlockK tile of A and the
// kBlockK x kBlockN tile of B into shared memory with coalesced loads (zeros outside the
// matrices), waits, then every thread runs its dot product over the slice out of shared memory.
// Each global element is now loaded once per block instead of once per thread.
// Limits: still one thread per element of C, so every FMA needs a shared-memory load of B; the
// shared-memory pipe, not DRAM, sets the pace.
// Example: build/bin/02_smem_tiling --size 4096

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "common/grid.h"
#include "common/harness.h"

// Tile shape (BM, BN, BK), chosen on the H100: README.md, "Choosing the tile".
// The tuning build (-DSGEMM_TUNING=ON) compiles this file again with other SGEMM_TILE values.
#ifndef SGEMM_TILE
#define SGEMM_TILE 32, 32, 128
#endif

struct TileShape {
  int block_m;  // kBlockM: rows of C per block = threads along y
  int block_n;  // kBlockN: columns of C per block = threads along x (a warp's width, ideally 32)
  int block_k;  // kBlockK: width of the K slice held in shared memory per step
};
constexpr TileShape kTile{SGEMM_TILE};

// One thread per element of the C tile: kBlockM * kBlockN threads. __launch_bounds__ gives the
// compiler the exact block size; the kernel needs about 32 registers, so registers never limit
// occupancy (2048 threads per SM on sm_90: 2 blocks of 1024, or 8 of 256).
template <int kBlockM, int kBlockN, int kBlockK>
__global__ void __launch_bounds__(kBlockM* kBlockN)
    sgemm_smem_tiled(int m, int n, int k, float alpha, const float* __restrict__ A,
                     const float* __restrict__ B, float beta, float* __restrict__ C) {
  static_assert(kBlockM > 0 && kBlockN > 0 && kBlockK > 0, "tile sizes must be positive");
  static_assert(kBlockN % 32 == 0 || 32 % kBlockN == 0,
                "a warp must cover whole rows of the tile, or whole warps a row, to coalesce");
  static_assert(kBlockM * kBlockN % 32 == 0, "the block must be made of whole warps");
  static_assert(kBlockM * kBlockN <= 1024, "one thread per element: at most 1024 threads");
  static_assert(kBlockK % 4 == 0, "the inner loop reads sA four floats at a time (LDS.128)");
  static_assert((kBlockM * kBlockK + kBlockK * kBlockN) * sizeof(float) <= 48 * 1024,
                "static shared memory is limited to 48 KB per block");

  // No padding needed: a warp reads one word of sA (a broadcast) and one row of sB (32
  // consecutive words, one per bank), so neither read has bank conflicts. The 16-byte alignment
  // lets the compiler read four consecutive floats of a row of sA with one LDS.128.
  __shared__ __align__(16) float sA[kBlockM][kBlockK];
  __shared__ __align__(16) float sB[kBlockK][kBlockN];

  const int tx = threadIdx.x;  // column inside the tile: a warp spans consecutive columns
  const int ty = threadIdx.y;  // row inside the tile

  // Prologue: move A, B and C to this block's tile once, in 64 bits (row * k can pass 2^31).
  // From here on every index is small and relative to the tile.
  const int block_row = blockIdx.y * kBlockM;  // < 65535 * kBlockM: the launcher's slabs
  const int block_col = blockIdx.x * kBlockN;  // <= n - 1
  A += static_cast<int64_t>(block_row) * k;
  B += block_col;
  C += static_cast<int64_t>(block_row) * n + block_col;
  const int rows_left = m - block_row;  // rows of C this block may write (>= 1)
  const int cols_left = n - block_col;  // columns of C this block may write (>= 1)

  float acc = 0.0f;

  // Main loop over K, one kBlockK-wide slice per step. A and B point at the current slice;
  // k_left counts the columns of A (rows of B) not consumed yet, so no index passes k.
  for (int k_left = k; k_left > 0; k_left -= kBlockK) {
    // Load the A tile (kBlockM x kBlockK): thread (ty, tx) copies row ty, columns tx,
    // tx + kBlockN, ... Consecutive threads read consecutive floats of a row of A: coalesced.
    // Outside the matrix the tile is zero, so the loop below needs no bounds checks.
#pragma unroll
    for (int c0 = 0; c0 < kBlockK; c0 += kBlockN) {
      const int c = c0 + tx;
      if (kBlockK % kBlockN == 0 || c < kBlockK) {
        const bool inside = ty < rows_left && c < k_left;
        sA[ty][c] = inside ? A[static_cast<int64_t>(ty) * k + c] : 0.0f;
      }
    }
    // Load the B tile (kBlockK x kBlockN): thread (ty, tx) copies column tx, rows ty,
    // ty + kBlockM, ... A warp reads consecutive floats of a row of B: coalesced.
#pragma unroll
    for (int r0 = 0; r0 < kBlockK; r0 += kBlockM) {
      const int r = r0 + ty;
      if (kBlockK % kBlockM == 0 || r < kBlockK) {
        const bool inside = r < k_left && tx < cols_left;
        sB[r][tx] = inside ? B[static_cast<int64_t>(r) * n + tx] : 0.0f;
      }
    }
    // Barrier 1: no thread may read the tiles before every thread has written its part.
    __syncthreads();

    // Fully unrolled, so every shared-memory address is a constant offset: sA[ty][i..i+3] is
    // one LDS.128 broadcast to the warp (all lanes share ty), sB[i][tx] is one LDS.32 of 32
    // consecutive words (one per bank).
#pragma unroll
    for (int i = 0; i < kBlockK; ++i) {
      acc += sA[ty][i] * sB[i][tx];
    }
    // Barrier 2: no thread may overwrite the tiles (next step) while another still reads them.
    __syncthreads();
    A += kBlockK;                            // next slice: kBlockK columns of A to the right
    B += static_cast<int64_t>(kBlockK) * n;  // next slice: kBlockK rows of B down
  }

  // Epilogue: with beta == 0, C is never read (it may hold NaN: BLAS semantics).
  if (ty < rows_left && tx < cols_left) {
    float* c = C + static_cast<int64_t>(ty) * n + tx;
    *c = (beta != 0.0f) ? alpha * acc + beta * *c : alpha * acc;
  }
}

template <int kBlockM, int kBlockN, int kBlockK>
void launch_smem_tiled(const sgemm::Problem& p, const float* A, const float* B, float* C,
                       cudaStream_t stream) {
  const dim3 block(kBlockN, kBlockM);
  // Rows of blocks go on gridDim.y (at most 65535): a taller C runs as several row slabs.
  sgemm::for_each_row_slab(p, kBlockM, [&](int64_t row0, int rows) {
    const dim3 grid(sgemm::ceil_div(p.n, kBlockN), sgemm::ceil_div(rows, kBlockM));
    sgemm_smem_tiled<kBlockM, kBlockN, kBlockK><<<grid, block, 0, stream>>>(
        rows, p.n, p.k, p.alpha, A + row0 * p.k, B, p.beta, C + row0 * p.n);
  });
}

int main(int argc, char** argv) {
  // The title carries the tile, so tuning runs of other SGEMM_TILE values tell themselves apart.
  static const std::string title =
      "shared-memory block tiling, BM x BN x BK = " + std::to_string(kTile.block_m) + "x" +
      std::to_string(kTile.block_n) + "x" + std::to_string(kTile.block_k);
  // Traffic model: every block reads its kBlockM x K strip of A and K x kBlockN strip of B once.
  const sgemm::Chapter chapter{"02_smem_tiling", title.c_str(),
                               &launch_smem_tiled<kTile.block_m, kTile.block_n, kTile.block_k>,
                               kTile.block_m, kTile.block_n};
  return sgemm::run_chapter(chapter, argc, argv);
}
