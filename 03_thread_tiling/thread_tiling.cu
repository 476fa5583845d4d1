// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 03: thread tiling (register blocking).
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> [03 thread tiling] -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> 08 tensor cores
//   -> 09 3xTF32
//
// In chapter 02 each thread computed one element of C, so every FMA needed a fresh value of B
// from shared memory. Here each thread computes kThreadM x kThreadN elements of C, kept in
// registers. For every k of the shared tiles it loads kThreadM values of A and kThreadN values of
// B into registers and does kThreadM * kThreadN FMAs with them (an outer product): 16 shared loads
// feed 64 FMAs at the default 8 x 8. The block tile grows to 128 x 128, which also quadruples
// the reuse of every global element against chapter 02.
// Limits: scalar loads everywhere (one float per instruction; vector loads are chapter 04), and
// the block waits at a barrier while it refills the tiles (chapter 06 overlaps the two).
// Example: build/bin/03_thread_tiling --size 4096

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "common/grid.h"
#include "common/harness.h"

// Tile shape (BM, BN, BK, TM, TN), chosen on the H100: README.md, "Choosing the tile".
// The tuning build (-DSGEMM_TUNING=ON) compiles this file again with other SGEMM_TILE values.
#ifndef SGEMM_TILE
#define SGEMM_TILE 128, 128, 16, 8, 8
#endif

struct TileShape {
  int block_m;   // kBlockM: rows of C per block
  int block_n;   // kBlockN: columns of C per block
  int block_k;   // kBlockK: width of the K slice held in shared memory per step
  int thread_m;  // kThreadM: rows of C per thread
  int thread_n;  // kThreadN: columns of C per thread
};
constexpr TileShape kTile{SGEMM_TILE};

// Threads per block for a tile: one per kThreadM x kThreadN sub-tile of C.
constexpr int threads_for(int block_m, int block_n, int thread_m, int thread_n) {
  return (block_m / thread_m) * (block_n / thread_n);
}

// The threads form a kThreadRows x kThreadCols grid over the block tile. Thread (tr, tc) owns
// rows tr, tr + kThreadRows, ... and columns tc, tc + kThreadCols, ... of the tile: spread out
// rather than packed, so that at each k the lanes of a warp read consecutive words of sB and
// rows of sA that fall in different banks (see README.md, "The idea").
// __launch_bounds__(threads, 2): two blocks per SM, so one block can compute while the other
// waits on its global loads; that caps the registers at 65536 / (2 * threads) per thread
// (128 at 256 threads), enough for the accumulators without spilling.
template <int kBlockM, int kBlockN, int kBlockK, int kThreadM, int kThreadN>
__global__ void __launch_bounds__(threads_for(kBlockM, kBlockN, kThreadM, kThreadN), 2)
    sgemm_thread_tiled(int m, int n, int k, float alpha, const float* __restrict__ A,
                       const float* __restrict__ B, float beta, float* __restrict__ C) {
  constexpr int kThreadRows = kBlockM / kThreadM;  // threads along the rows of the tile
  constexpr int kThreadCols = kBlockN / kThreadN;  // threads along the columns of the tile
  constexpr int kThreads = kThreadRows * kThreadCols;
  static_assert(kBlockM > 0 && kBlockN > 0 && kBlockK > 0 && kThreadM > 0 && kThreadN > 0,
                "tile sizes must be positive");
  static_assert(kBlockM % kThreadM == 0 && kBlockN % kThreadN == 0,
                "the thread tile must divide the block tile");
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 1024 threads");
  // Tile loads: every thread copies the same number of elements, always from the same column.
  static_assert(kThreads % kBlockK == 0 && kBlockM * kBlockK % kThreads == 0,
                "the A tile must split evenly over the threads, whole rows per pass");
  static_assert(kThreads % kBlockN == 0 && kBlockK * kBlockN % kThreads == 0,
                "the B tile must split evenly over the threads, whole rows per pass");
  static_assert((kBlockM * kBlockK + kBlockK * kBlockN) * sizeof(float) <= 48 * 1024,
                "static shared memory is limited to 48 KB per block");
  static_assert(kThreadM * kThreadN <= 128, "accumulators must stay in registers");

  __shared__ float sA[kBlockM][kBlockK];  // A tile, row-major as in global memory
  __shared__ float sB[kBlockK][kBlockN];  // B tile, row-major as in global memory

  const int tid = threadIdx.x;
  const int tr = tid / kThreadCols;  // thread row in the thread grid
  const int tc = tid % kThreadCols;  // thread column: consecutive lanes, consecutive columns

  // Prologue: move A, B and C to this block's tile once, in 64 bits (row * k can pass 2^31).
  const int block_row = blockIdx.y * kBlockM;  // < 65535 * kBlockM: the launcher's slabs
  const int block_col = blockIdx.x * kBlockN;  // <= n - 1
  A += static_cast<int64_t>(block_row) * k;
  B += block_col;
  C += static_cast<int64_t>(block_row) * n + block_col;
  const int rows_left = m - block_row;  // rows of C this block may write (>= 1)
  const int cols_left = n - block_col;  // columns of C this block may write (>= 1)

  // Who copies what. A tile (kBlockM x kBlockK): thread tid copies column a_col of rows a_row,
  // a_row + kARowStep, ...; consecutive threads read consecutive floats of a row of A.
  constexpr int kARowStep = kThreads / kBlockK;
  constexpr int kALoads = kBlockM * kBlockK / kThreads;
  const int a_row = tid / kBlockK;
  const int a_col = tid % kBlockK;
  const float* gA = A + static_cast<int64_t>(a_row) * k + a_col;
  const int64_t a_step = static_cast<int64_t>(kARowStep) * k;  // kARowStep rows of A
  // B tile (kBlockK x kBlockN): thread tid copies column b_col of rows b_row, b_row +
  // kBRowStep, ...; a warp reads 32 consecutive floats of a row of B.
  constexpr int kBRowStep = kThreads / kBlockN;
  constexpr int kBLoads = kBlockK * kBlockN / kThreads;
  const int b_row = tid / kBlockN;
  const int b_col = tid % kBlockN;
  const bool b_col_inside = b_col < cols_left;
  const float* gB = B + static_cast<int64_t>(b_row) * n + b_col;
  const int64_t b_step = static_cast<int64_t>(kBRowStep) * n;     // kBRowStep rows of B
  const int64_t b_tile_step = static_cast<int64_t>(kBlockK) * n;  // kBlockK rows of B

  // The accumulators: compile-time indices only (fully unrolled loops), so they live in
  // registers; a runtime index would push the array to local memory.
  float acc[kThreadM][kThreadN] = {};

  // Main loop over K, one kBlockK-wide slice per step. k_left counts the columns of A (rows of
  // B) not consumed yet, so no index passes k.
  for (int k_left = k; k_left > 0; k_left -= kBlockK) {
    // Load the tiles, zeros outside the matrices, so the compute loop needs no bounds checks.
    // gA and gB point at this thread's first element of the current tiles.
    const bool a_col_inside = a_col < k_left;
#pragma unroll
    for (int p = 0; p < kALoads; ++p) {
      const int r = a_row + p * kARowStep;
      sA[r][a_col] = (r < rows_left && a_col_inside) ? gA[p * a_step] : 0.0f;
    }
#pragma unroll
    for (int p = 0; p < kBLoads; ++p) {
      const int r = b_row + p * kBRowStep;
      sB[r][b_col] = (r < k_left && b_col_inside) ? gB[p * b_step] : 0.0f;
    }
    gA += kBlockK;      // next slice: kBlockK columns of A to the right
    gB += b_tile_step;  // next slice: kBlockK rows of B down
    // Barrier 1: the tiles are complete before anyone reads them.
    __syncthreads();

    // Outer products. Per k: kThreadM + kThreadN shared loads, kThreadM * kThreadN FMAs.
    // A load of sA hits 32 / kThreadCols distinct words per warp (one per thread row, kBlockK
    // words apart: different banks unless kBlockK % 32 == 0), each shared by the lanes of its
    // row; the compiler merges four consecutive kk into one LDS.128, which then takes one
    // wavefront per distinct row (2 at the default tile). The kThreadN loads of sB are
    // kThreadCols consecutive words each.
#pragma unroll
    for (int kk = 0; kk < kBlockK; ++kk) {
      float rA[kThreadM];
      float rB[kThreadN];
#pragma unroll
      for (int i = 0; i < kThreadM; ++i) rA[i] = sA[tr + i * kThreadRows][kk];
#pragma unroll
      for (int j = 0; j < kThreadN; ++j) rB[j] = sB[kk][tc + j * kThreadCols];
#pragma unroll
      for (int i = 0; i < kThreadM; ++i) {
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] += rA[i] * rB[j];
      }
    }
    // Barrier 2: everyone is done with the tiles before the next step overwrites them.
    __syncthreads();
  }

  // Epilogue: with beta == 0, C is never read (it may hold NaN: BLAS semantics). For each (i, j)
  // a warp writes kThreadCols consecutive floats on each of its rows.
  const bool read_c = beta != 0.0f;
#pragma unroll
  for (int i = 0; i < kThreadM; ++i) {
    const int row = tr + i * kThreadRows;
    if (row >= rows_left) break;  // rows grow with i
    float* c_row = C + static_cast<int64_t>(row) * n;
#pragma unroll
    for (int j = 0; j < kThreadN; ++j) {
      const int col = tc + j * kThreadCols;
      if (col < cols_left) {
        c_row[col] = read_c ? alpha * acc[i][j] + beta * c_row[col] : alpha * acc[i][j];
      }
    }
  }
}

template <int kBlockM, int kBlockN, int kBlockK, int kThreadM, int kThreadN>
void launch_thread_tiled(const sgemm::Problem& p, const float* A, const float* B, float* C,
                         cudaStream_t stream) {
  constexpr int kThreads = threads_for(kBlockM, kBlockN, kThreadM, kThreadN);
  // Rows of blocks go on gridDim.y (at most 65535): a taller C runs as several row slabs.
  sgemm::for_each_row_slab(p, kBlockM, [&](int64_t row0, int rows) {
    const dim3 grid(sgemm::ceil_div(p.n, kBlockN), sgemm::ceil_div(rows, kBlockM));
    sgemm_thread_tiled<kBlockM, kBlockN, kBlockK, kThreadM, kThreadN>
        <<<grid, kThreads, 0, stream>>>(rows, p.n, p.k, p.alpha, A + row0 * p.k, B, p.beta,
                                        C + row0 * p.n);
  });
}

int main(int argc, char** argv) {
  // The title carries the tile, so tuning runs of other SGEMM_TILE values tell themselves apart.
  static const std::string title =
      "thread tiling, BM x BN x BK = " + std::to_string(kTile.block_m) + "x" +
      std::to_string(kTile.block_n) + "x" + std::to_string(kTile.block_k) +
      ", TM x TN = " + std::to_string(kTile.thread_m) + "x" + std::to_string(kTile.thread_n);
  // Traffic model: every block reads its kBlockM x K strip of A and K x kBlockN strip of B once.
  const sgemm::Chapter chapter{"03_thread_tiling", title.c_str(),
                               &launch_thread_tiled<kTile.block_m, kTile.block_n, kTile.block_k,
                                                    kTile.thread_m, kTile.thread_n>,
                               kTile.block_m, kTile.block_n};
  return sgemm::run_chapter(chapter, argc, argv);
}
