// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 04: 128-bit loads and stores (float4).
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> [04 vectorized]
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> 08 tensor cores
//   -> 09 3xTF32
//
// Chapter 03 gave each of 256 threads an 8 x 8 block of C, but moved every float with its own
// instruction. Here the same tiling moves 4 floats per instruction wherever it can:
//   - global loads of A and B as float4 (LDG.E.128): one instruction per 4 elements;
//   - A is stored TRANSPOSED in shared memory, sA[k][m], so the 8 values of A a thread needs
//     at step k are consecutive, like the 8 values of B in sB[k][n]: both fragments are read
//     with two LDS.128 each instead of eight LDS.32;
//   - C is written as float4 (STG.E.128).
// float4 accesses need 16-byte aligned addresses: rows of A start on 16 bytes only when
// K % 4 == 0, rows of B and C only when N % 4 == 0. The launcher picks the kernel instantiation
// kAligned = (K % 4 == 0 && N % 4 == 0); the other one loads and stores scalars, guarded. Tiles
// at the matrix edges are guarded either way (zeros outside A and B, no stores outside C).
// Each of the three is a compile-time switch (SGEMM_VECTOR_LOADS, SGEMM_TRANSPOSED_A,
// SGEMM_VECTOR_STORES; all 1 here), so the tuning build measures them one at a time: README.md,
// "Results". With all three off the kernel is chapter 03's with each thread's 8 x 8 block made
// of consecutive rows and columns (which vector accesses need), its B fragment already read
// with LDS.128.
// Limits: the transposing stores into sA and the B fragment reads of a warp collide on
// shared-memory banks (chapter 05); loads and compute do not overlap (chapter 06).
// Example: build/bin/04_vectorized --size 4096

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
// The chapter's three changes, one switch each (1: on). The tuning variants turn them on in
// order: scalar (all off), float4_loads, transposed_a, then this file as it is.
#ifndef SGEMM_VECTOR_LOADS
#define SGEMM_VECTOR_LOADS 1  // global loads of A and B as float4 (LDG.E.128)
#endif
#ifndef SGEMM_TRANSPOSED_A
#define SGEMM_TRANSPOSED_A 1  // A stored transposed in shared memory, its fragment read by LDS.128
#endif
#ifndef SGEMM_VECTOR_STORES
#define SGEMM_VECTOR_STORES 1  // C written as float4 (STG.E.128)
#endif

namespace {

constexpr bool kVectorLoads = SGEMM_VECTOR_LOADS != 0;
constexpr bool kTransposedA = SGEMM_TRANSPOSED_A != 0;
constexpr bool kVectorStores = SGEMM_VECTOR_STORES != 0;

// Everything the kernel derives from the tile shape, checked at compile time so that a bad
// candidate of the tuning build fails to compile instead of failing at run time.
template <int kBlockM_, int kBlockN_, int kBlockK_, int kThreadM_, int kThreadN_>
struct Tile {
  static constexpr int kBlockM = kBlockM_;    // rows of C per block
  static constexpr int kBlockN = kBlockN_;    // columns of C per block
  static constexpr int kBlockK = kBlockK_;    // depth of the K tile held in shared memory
  static constexpr int kThreadM = kThreadM_;  // rows of C per thread (consecutive)
  static constexpr int kThreadN = kThreadN_;  // columns of C per thread (consecutive)

  static constexpr int kThreadsN = kBlockN / kThreadN;  // threads along a row of the tile
  static constexpr int kThreads = (kBlockM / kThreadM) * kThreadsN;

  // Load plan for A: kThreadsPerRowA threads share a row of the A tile; thread q of them loads
  // the float4s q, q + kThreadsPerRowA, ... of it.
  static constexpr int kThreadsPerRowA = kThreads / kBlockM;
  static constexpr int kChunksA = kBlockK / (4 * kThreadsPerRowA);  // float4s per thread
  // Load plan for B: a row of the B tile is kBlockN / 4 float4s, kRowsPerPassB rows per pass.
  static constexpr int kThreadsPerRowB = kBlockN / 4;
  static constexpr int kRowsPerPassB = kThreads / kThreadsPerRowB;
  static constexpr int kCopiesB = kBlockK / kRowsPerPassB;  // float4s per thread
  // Scalar load plan (SGEMM_VECTOR_LOADS=0), chapter 03's: consecutive threads read consecutive
  // floats of a row, kScalarRowsA rows of A and kScalarRowsB rows of B per pass.
  static constexpr int kScalarRowsA = kThreads / kBlockK;
  static constexpr int kScalarRowsB = kThreads / kBlockN;

  // Up to 8 x 8 accumulators per thread fit in 128 registers, i.e. 65536 / (128 * threads)
  // blocks per SM (2 for 256 threads); bigger thread tiles are allowed 255 registers.
  static constexpr int kMinBlocksPerSm =
      65536 / (kThreads * (kThreadM * kThreadN <= 64 ? 128 : 256)) > 0
          ? 65536 / (kThreads * (kThreadM * kThreadN <= 64 ? 128 : 256))
          : 1;

  static_assert(kBlockM % kThreadM == 0 && kBlockN % kThreadN == 0, "threads must tile the block");
  static_assert(kThreadM % 4 == 0 && kThreadN % 4 == 0,
                "fragments and C are accessed as float4: thread tiles are multiples of 4");
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 1024 threads");
  static_assert(kThreads % kBlockM == 0, "A is loaded by a whole number of threads per row");
  static_assert(kBlockK % (4 * kThreadsPerRowA) == 0, "A rows split into whole float4s");
  static_assert(kBlockN % 4 == 0 && kThreads % kThreadsPerRowB == 0 && kBlockK % kRowsPerPassB == 0,
                "B is loaded as whole float4s, every thread the same number of times");
  static_assert(!kVectorLoads || (kChunksA >= 1 && kCopiesB >= 1),
                "float4 loads: every thread copies at least one float4 of A and one of B");
  static_assert(kVectorLoads || (kThreads % kBlockK == 0 && kBlockM % kScalarRowsA == 0 &&
                                 kThreads % kBlockN == 0 && kBlockK % kScalarRowsB == 0),
                "scalar loads: whole rows per pass, every thread the same number of elements");
  static_assert((kBlockK * kBlockM + kBlockK * kBlockN) * sizeof(float) <= 48 * 1024,
                "static shared memory is limited to 48 KB per block");
};

struct TileShape {
  int block_m, block_n, block_k, thread_m, thread_n;
};
constexpr TileShape kTile{SGEMM_TILE};
using MainTile = Tile<kTile.block_m, kTile.block_n, kTile.block_k, kTile.thread_m, kTile.thread_n>;

// Loads 4 consecutive floats of a row; zeros where the row or the columns lie outside.
// kAligned: the row starts on 16 bytes and the 4 floats are all inside or all outside, so one
// LDG.E.128 does it. Otherwise 4 guarded scalar loads (LDG.E).
template <bool kAligned>
__device__ __forceinline__ float4 load_4(const float* row_ptr, int col, int cols, bool row_ok) {
  if constexpr (kAligned) {
    return row_ok && col < cols ? *reinterpret_cast<const float4*>(row_ptr + col)
                                : make_float4(0.f, 0.f, 0.f, 0.f);
  } else {
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = row_ok && col + j < cols ? row_ptr[col + j] : 0.0f;
    return make_float4(v[0], v[1], v[2], v[3]);
  }
}

// Where element (m, kk) of the A tile lives in sA: transposed, sA[kk][m], so that the kThreadM
// values of A a thread needs at step kk are consecutive (LDS.128); or as in global memory,
// sA[m][kk] (SGEMM_TRANSPOSED_A=0), read one float at a time.
template <class T>
__device__ __forceinline__ int a_index(int m, int kk) {
  return kTransposedA ? kk * T::kBlockM + m : m * T::kBlockK + kk;
}

// kAligned: K % 4 == 0 and N % 4 == 0, so rows of A, B and C start on 16 bytes.
template <class T, bool kAligned>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocksPerSm)
    sgemm_vectorized(int m, int n, int k, float alpha, const float* __restrict__ A,
                     const float* __restrict__ B, float beta, float* __restrict__ C) {
  // sA is A transposed (a_index): the kThreadM values of A a thread needs at step kk are
  // consecutive.
  __shared__ __align__(16) float sA[T::kBlockK * T::kBlockM];
  __shared__ __align__(16) float sB[T::kBlockK][T::kBlockN];

  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * T::kBlockM;  // < 65535 * kBlockM: the launcher's slabs
  const int block_col = blockIdx.x * T::kBlockN;

  // The thread's block of C, packed: rows ty * kThreadM.., columns tx * kThreadN.. (chapter 03
  // spread them kThreadRows and kThreadCols apart; LDS.128 needs 4 consecutive floats).
  const int ty = tid / T::kThreadsN;
  const int tx = tid % T::kThreadsN;

  // Load plan. A: thread loads row a_row of the A tile, float4s starting at columns a_kc,
  // a_kc + 4 * kThreadsPerRowA, ...: two neighbouring threads read 32 consecutive bytes of a
  // row. B: thread loads the float4 at column b_col of rows b_row, b_row + kRowsPerPassB, ...:
  // a warp reads 512 consecutive bytes of a row.
  const int a_row = tid / T::kThreadsPerRowA;
  const int a_kc = (tid % T::kThreadsPerRowA) * 4;
  const bool a_row_ok = block_row + a_row < m;
  const float* gA = A + static_cast<int64_t>(a_row_ok ? block_row + a_row : 0) * k;
  const int b_row = tid / T::kThreadsPerRowB;
  const int b_col = (tid % T::kThreadsPerRowB) * 4;

  float acc[T::kThreadM][T::kThreadN] = {};
  float rA[T::kThreadM];
  float rB[T::kThreadN];

  for (int k0 = 0; k0 < k; k0 += T::kBlockK) {
    if constexpr (kVectorLoads) {
      // Load A, one float4 along k. Transposed, the 4 values go to 4 rows of sA (these scalar
      // stores are the bank conflicts chapter 05 removes); untransposed, one STS.128.
#pragma unroll
      for (int c = 0; c < T::kChunksA; ++c) {
        const int kk = a_kc + c * 4 * T::kThreadsPerRowA;
        const float4 v = load_4<kAligned>(gA, k0 + kk, k, a_row_ok);
        if constexpr (kTransposedA) {
          sA[a_index<T>(a_row, kk + 0)] = v.x;
          sA[a_index<T>(a_row, kk + 1)] = v.y;
          sA[a_index<T>(a_row, kk + 2)] = v.z;
          sA[a_index<T>(a_row, kk + 3)] = v.w;
        } else {
          *reinterpret_cast<float4*>(&sA[a_index<T>(a_row, kk)]) = v;
        }
      }
      // Load B, one float4 along n, and store it as it is (STS.128).
#pragma unroll
      for (int c = 0; c < T::kCopiesB; ++c) {
        const int row = b_row + c * T::kRowsPerPassB;
        const bool row_ok = k0 + row < k;
        const float* src = B + static_cast<int64_t>(row_ok ? k0 + row : 0) * n;
        *reinterpret_cast<float4*>(&sB[row][b_col]) =
            load_4<kAligned>(src, block_col + b_col, n, row_ok);
      }
    } else {
      // Chapter 03's loads: one float per instruction, a warp reading consecutive floats.
      const int a_col = tid % T::kBlockK;
#pragma unroll
      for (int p = 0; p < T::kBlockM / T::kScalarRowsA; ++p) {
        const int r = tid / T::kBlockK + p * T::kScalarRowsA;
        const bool ok = block_row + r < m && k0 + a_col < k;
        sA[a_index<T>(r, a_col)] =
            ok ? A[static_cast<int64_t>(block_row + r) * k + k0 + a_col] : 0.0f;
      }
      const int b_n = tid % T::kBlockN;
#pragma unroll
      for (int p = 0; p < T::kBlockK / T::kScalarRowsB; ++p) {
        const int r = tid / T::kBlockN + p * T::kScalarRowsB;
        const bool ok = k0 + r < k && block_col + b_n < n;
        sB[r][b_n] = ok ? B[static_cast<int64_t>(k0 + r) * n + block_col + b_n] : 0.0f;
      }
    }
    // Barrier 1: the tiles are complete before anyone reads them.
    __syncthreads();

    // Fully unrolled: every shared-memory address below is a constant offset from one register.
#pragma unroll
    for (int kk = 0; kk < T::kBlockK; ++kk) {
      // The fragments, 4 floats per LDS.128: column kk of the A tile, row kk of the B tile.
#pragma unroll
      for (int i = 0; i < T::kThreadM; i += 4) {
        if constexpr (kTransposedA) {
          const float4 v =
              *reinterpret_cast<const float4*>(&sA[a_index<T>(ty * T::kThreadM + i, kk)]);
          rA[i + 0] = v.x;
          rA[i + 1] = v.y;
          rA[i + 2] = v.z;
          rA[i + 3] = v.w;
        } else {
#pragma unroll
          for (int ii = 0; ii < 4; ++ii) rA[i + ii] = sA[a_index<T>(ty * T::kThreadM + i + ii, kk)];
        }
      }
#pragma unroll
      for (int j = 0; j < T::kThreadN; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&sB[kk][tx * T::kThreadN + j]);
        rB[j + 0] = v.x;
        rB[j + 1] = v.y;
        rB[j + 2] = v.z;
        rB[j + 3] = v.w;
      }
      // The outer product: kThreadM x kThreadN FMAs out of registers.
#pragma unroll
      for (int i = 0; i < T::kThreadM; ++i) {
#pragma unroll
        for (int j = 0; j < T::kThreadN; ++j) acc[i][j] = fmaf(rA[i], rB[j], acc[i][j]);
      }
    }
    // Barrier 2: everyone is done reading before the next iteration overwrites the tiles.
    __syncthreads();
  }

  // Epilogue: C = alpha * acc + beta * C, 4 columns at a time. With beta == 0, C is never read
  // (it may hold NaN). vector_c: one STG.E.128 per 4 columns; otherwise 4 guarded scalar stores.
  constexpr bool vector_c = kVectorStores && kAligned;
#pragma unroll
  for (int i = 0; i < T::kThreadM; ++i) {
    const int row = block_row + ty * T::kThreadM + i;
    if (row >= m) continue;
    float* c_row = C + static_cast<int64_t>(row) * n;
#pragma unroll
    for (int j = 0; j < T::kThreadN; j += 4) {
      const int col = block_col + tx * T::kThreadN + j;
      const float* v = &acc[i][j];
      if (vector_c) {
        if (col >= n) continue;
        float4 out = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
        if (beta != 0.0f) {
          const float4 old = *reinterpret_cast<const float4*>(c_row + col);
          out.x += beta * old.x;
          out.y += beta * old.y;
          out.z += beta * old.z;
          out.w += beta * old.w;
        }
        *reinterpret_cast<float4*>(c_row + col) = out;  // STG.E.128
      } else {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
          if (col + jj < n) {
            c_row[col + jj] = beta != 0.0f ? alpha * v[jj] + beta * c_row[col + jj] : alpha * v[jj];
          }
        }
      }
    }
  }
}

template <class T>
void launch_tile(const sgemm::Problem& p, const float* A, const float* B, float* C,
                 cudaStream_t stream) {
  // float4 loads need rows of A (K floats) and of B and C (N floats) to start on 16 bytes;
  // cudaMalloc pointers are 256-byte aligned, so the shape decides.
  const bool aligned = p.k % 4 == 0 && p.n % 4 == 0;
  auto* kernel = aligned ? &sgemm_vectorized<T, true> : &sgemm_vectorized<T, false>;
  // Rows of blocks go on gridDim.y (at most 65535): a taller C runs as several row slabs.
  sgemm::for_each_row_slab(p, T::kBlockM, [&](int64_t row0, int rows) {
    const dim3 grid(sgemm::ceil_div(p.n, T::kBlockN), sgemm::ceil_div(rows, T::kBlockM));
    kernel<<<grid, T::kThreads, 0, stream>>>(rows, p.n, p.k, p.alpha, A + row0 * p.k, B, p.beta,
                                             C + row0 * p.n);
  });
}

}  // namespace

int main(int argc, char** argv) {
  // The title carries the tile, so tuning runs of other SGEMM_TILE values tell themselves apart.
  static const std::string title =
      std::string(kVectorLoads ? "float4 loads" : "scalar loads") +
      (kTransposedA ? ", A transposed in shared memory" : ", A as in global memory") +
      (kVectorStores ? ", float4 stores" : ", scalar stores") +
      ", BM x BN x BK = " + std::to_string(kTile.block_m) + "x" + std::to_string(kTile.block_n) +
      "x" + std::to_string(kTile.block_k) + ", thread " + std::to_string(kTile.thread_m) + "x" +
      std::to_string(kTile.thread_n);
  const sgemm::Chapter chapter{"04_vectorized", title.c_str(), &launch_tile<MainTile>,
                               kTile.block_m, kTile.block_n};
  return sgemm::run_chapter(chapter, argc, argv);
}
