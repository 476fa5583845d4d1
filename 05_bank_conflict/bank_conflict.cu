// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 05: shared-memory bank conflicts (warp tiling and padding).
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> [05 bank conflicts] -> 06 double buffer -> 07 any shape -> 08 tensor cores
//   -> 09 3xTF32
//
// Chapter 04 read its fragments with LDS.128 but let threads land on shared-memory banks as
// their thread index fell: the transposing stores of A into sA[k][m] hit every bank twice, and
// the 16 different B vectors a warp reads in one LDS.128 fall on 4 bank groups. Here
//   - sA rows are padded from kBlockM to kBlockM + 4 floats, so the two halves of a warp that
//     store A transposed land 16 banks apart (conflict-free stores);
//   - threads are laid out by warp (warp tiling): a warp owns a kWarpM x kWarpN piece of C, its
//     lanes a 4 x 8 grid of 4 x 4 blocks, so one LDS.128 of a warp reads 4 (A) or 8 (B)
//     consecutive float4s: distinct banks, and lane pairs that share an address let the
//     hardware return it once (2 wavefronts per LDS.128 instead of 4).
// Limits: one shared-memory buffer, so loads of the next K tile still wait behind a barrier
// (chapter 06); FP32 CUDA cores only.
// Example: build/bin/05_bank_conflict --size 4096

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "common/grid.h"
#include "common/harness.h"

// Tile shape (BM, BN, BK, WM, WN, TM, TN), chosen on the H100: README.md, "Choosing the tile".
// The tuning build (-DSGEMM_TUNING=ON) compiles this file again with other SGEMM_TILE values.
#ifndef SGEMM_TILE
#define SGEMM_TILE 128, 128, 16, 32, 64, 8, 8
#endif

namespace {

constexpr int log2_exact(int x) { return x <= 1 ? 0 : 1 + log2_exact(x / 2); }

// Everything the kernel derives from the tile shape, checked at compile time so that a bad
// candidate of the tuning build fails to compile instead of failing at run time.
template <int kBlockM_, int kBlockN_, int kBlockK_, int kWarpM_, int kWarpN_, int kThreadM_,
          int kThreadN_>
struct Tile {
  static constexpr int kBlockM = kBlockM_;    // rows of C per block
  static constexpr int kBlockN = kBlockN_;    // columns of C per block
  static constexpr int kBlockK = kBlockK_;    // depth of the K tile held in shared memory
  static constexpr int kWarpM = kWarpM_;      // rows of C per warp
  static constexpr int kWarpN = kWarpN_;      // columns of C per warp
  static constexpr int kThreadM = kThreadM_;  // rows of C per thread, in groups of 4
  static constexpr int kThreadN = kThreadN_;  // columns of C per thread, in groups of 4

  static constexpr int kWarpsM = kBlockM / kWarpM;
  static constexpr int kWarpsN = kBlockN / kWarpN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kLanesM = kWarpM / kThreadM;  // lanes of a warp along M ...
  static constexpr int kLanesN = kWarpN / kThreadN;  // ... and along N
  static constexpr int kLanesNLog2 = log2_exact(kLanesN);

  // The padding: a row of sA[k][m] is kBlockM + 4 floats. kBlockM is a multiple of 32, so
  // without it element (k, m) sits in bank m % 32 whatever k is; with it, in bank
  // (4 * k + m) % 32. The 4 keeps every row 16-byte aligned for LDS.128.
  static constexpr int kStrideA = kBlockM + 4;

  // Load plan for A: kThreadsPerRowA threads share a row of the A tile; thread q of them loads
  // the float4s q, q + kThreadsPerRowA, ... of it.
  static constexpr int kThreadsPerRowA = kThreads / kBlockM;
  static constexpr int kChunksA = kBlockK / (4 * kThreadsPerRowA);  // float4s per thread
  // Load plan for B: a row of the B tile is kBlockN / 4 float4s, kRowsPerPassB rows per pass.
  static constexpr int kThreadsPerRowB = kBlockN / 4;
  static constexpr int kRowsPerPassB = kThreads / kThreadsPerRowB;
  static constexpr int kCopiesB = kBlockK / kRowsPerPassB;  // float4s per thread

  // Up to 8 x 8 accumulators per thread fit in 128 registers, i.e. 65536 / (128 * threads)
  // blocks per SM (2 for 256 threads); bigger thread tiles are allowed 255 registers.
  static constexpr int kMinBlocksPerSm =
      65536 / (kThreads * (kThreadM * kThreadN <= 64 ? 128 : 256)) > 0
          ? 65536 / (kThreads * (kThreadM * kThreadN <= 64 ? 128 : 256))
          : 1;

  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0, "warps must tile the block");
  static_assert(kWarpM % kThreadM == 0 && kWarpN % kThreadN == 0, "lanes must tile the warp");
  static_assert(kLanesM * kLanesN == 32, "a warp tile must be covered by exactly 32 lanes");
  static_assert(kThreadM % 4 == 0 && kThreadN % 4 == 0,
                "fragments are read as float4 (LDS.128): thread tiles are made of 4x4 blocks");
  static_assert(kLanesM % 2 == 0 && (1 << kLanesNLog2) == kLanesN,
                "the interleaved lane layout needs an even lane count along M and a power of "
                "two along N");
  static_assert(kBlockM % 32 == 0, "the padding argument assumes rows of sA of 32k floats");
  static_assert(kThreads <= 1024, "at most 1024 threads per block");
  static_assert(kThreads % kBlockM == 0, "A is loaded by a whole number of threads per row");
  static_assert(kThreadsPerRowA <= 2,
                "more than 2 threads per row of A would make the transposing stores conflict");
  static_assert(kBlockK % (4 * kThreadsPerRowA) == 0, "A rows split into whole float4s");
  static_assert(kBlockN % 4 == 0 && kThreads % kThreadsPerRowB == 0 && kBlockK % kRowsPerPassB == 0,
                "B is loaded as whole float4s, every thread the same number of times");
  static_assert((kBlockK * kStrideA + kBlockK * kBlockN) * sizeof(float) <= 48 * 1024,
                "static shared memory is limited to 48 KB per block");
};

struct TileShape {
  int block_m, block_n, block_k, warp_m, warp_n, thread_m, thread_n;
};
constexpr TileShape kTile{SGEMM_TILE};
using MainTile = Tile<kTile.block_m, kTile.block_n, kTile.block_k, kTile.warp_m, kTile.warp_n,
                      kTile.thread_m, kTile.thread_n>;

// Loads 4 consecutive floats of a row; zeros where the row or the columns lie outside.
// kAligned: the row starts on 16 bytes and the 4 floats are all inside or all outside, so one
// LDG.E.128 does it. Otherwise 4 guarded scalar loads.
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

// Reads the fragments of step kk: kThreadM values of A and kThreadN of B, as float4s.
template <class T>
__device__ __forceinline__ void load_fragments(float (&rA)[T::kThreadM], float (&rB)[T::kThreadN],
                                               const float (*sA)[T::kStrideA],
                                               const float (*sB)[T::kBlockN], int a_off, int b_off,
                                               int kk) {
#pragma unroll
  for (int g = 0; g < T::kThreadM / 4; ++g) {
    const float4 v = *reinterpret_cast<const float4*>(&sA[kk][a_off + g * T::kLanesM * 4]);
    rA[4 * g + 0] = v.x;
    rA[4 * g + 1] = v.y;
    rA[4 * g + 2] = v.z;
    rA[4 * g + 3] = v.w;
  }
#pragma unroll
  for (int h = 0; h < T::kThreadN / 4; ++h) {
    const float4 v = *reinterpret_cast<const float4*>(&sB[kk][b_off + h * T::kLanesN * 4]);
    rB[4 * h + 0] = v.x;
    rB[4 * h + 1] = v.y;
    rB[4 * h + 2] = v.z;
    rB[4 * h + 3] = v.w;
  }
}

// kAligned: K % 4 == 0 and N % 4 == 0, so rows of A, B and C start on 16 bytes.
template <class T, bool kAligned>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocksPerSm)
    sgemm_warp_tiled(int m, int n, int k, float alpha, const float* __restrict__ A,
                     const float* __restrict__ B, float beta, float* __restrict__ C) {
  __shared__ __align__(16) float sA[T::kBlockK][T::kStrideA];  // A transposed, rows padded
  __shared__ __align__(16) float sB[T::kBlockK][T::kBlockN];

  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * T::kBlockM;  // < 65535 * kBlockM: the launcher's slabs
  const int block_col = blockIdx.x * T::kBlockN;

  // Warp tiling. Warp w owns rows (w / kWarpsN) * kWarpM.. and columns (w % kWarpsN) * kWarpN..
  // of the block's tile. Inside it the 32 lanes form a kLanesM x kLanesN grid, interleaved:
  // lane bit 0 is the lane's row bit 0, the next log2(kLanesN) bits its column, the rest the
  // higher row bits. So lanes 2i and 2i+1 share a column (same B vector) and lanes i and i^2 a
  // row (same A vector): the pairs the hardware serves with one return (README.md).
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int lane_m = (lane & 1) | ((lane >> (1 + T::kLanesNLog2)) << 1);
  const int lane_n = (lane >> 1) & (T::kLanesN - 1);
  // A thread's kThreadM rows are kThreadM / 4 blocks of 4, kLanesM * 4 rows apart (likewise its
  // columns): a warp's LDS.128 then covers 4 * kLanesM consecutive floats of sA (or
  // 4 * kLanesN of sB): no two lanes in the same bank with different addresses.
  const int a_off = (warp / T::kWarpsN) * T::kWarpM + lane_m * 4;  // sA column of rA[0]
  const int b_off = (warp % T::kWarpsN) * T::kWarpN + lane_n * 4;  // sB column of rB[0]

  // Load plan (as in chapter 04): A row a_row, float4s at a_kc + c * 4 * kThreadsPerRowA;
  // B float4 at column b_col of rows b_row + c * kRowsPerPassB.
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
    // Load A (float4 along k) and store it transposed, one float per row of sA. Thanks to the
    // padding, the two lanes of a row pair (a_kc = 0 and 4) write 16 banks apart.
#pragma unroll
    for (int c = 0; c < T::kChunksA; ++c) {
      const int kk = a_kc + c * 4 * T::kThreadsPerRowA;
      const float4 v = load_4<kAligned>(gA, k0 + kk, k, a_row_ok);
      sA[kk + 0][a_row] = v.x;
      sA[kk + 1][a_row] = v.y;
      sA[kk + 2][a_row] = v.z;
      sA[kk + 3][a_row] = v.w;
    }
    // Load B (float4 along n) and store it as is: a warp writes 512 consecutive bytes.
#pragma unroll
    for (int c = 0; c < T::kCopiesB; ++c) {
      const int row = b_row + c * T::kRowsPerPassB;
      const bool row_ok = k0 + row < k;
      const float* src = B + static_cast<int64_t>(row_ok ? k0 + row : 0) * n;
      *reinterpret_cast<float4*>(&sB[row][b_col]) =
          load_4<kAligned>(src, block_col + b_col, n, row_ok);
    }
    // Barrier 1: the tiles are complete before anyone reads them.
    __syncthreads();

#pragma unroll
    for (int kk = 0; kk < T::kBlockK; ++kk) {
      load_fragments<T>(rA, rB, sA, sB, a_off, b_off, kk);
#pragma unroll
      for (int i = 0; i < T::kThreadM; ++i) {
#pragma unroll
        for (int j = 0; j < T::kThreadN; ++j) acc[i][j] = fmaf(rA[i], rB[j], acc[i][j]);
      }
    }
    // Barrier 2: everyone is done reading before the next iteration overwrites the tiles.
    __syncthreads();
  }

  // Epilogue: C = alpha * acc + beta * C. With beta == 0, C is never read (it may hold NaN).
  // Thread rows: a_off + g * kLanesM * 4 + i; columns: b_off + h * kLanesN * 4 + (0..3). Eight
  // lanes of a row store 128 consecutive bytes.
#pragma unroll
  for (int g = 0; g < T::kThreadM / 4; ++g) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = block_row + a_off + g * T::kLanesM * 4 + i;
      if (row >= m) continue;
      float* c_row = C + static_cast<int64_t>(row) * n;
#pragma unroll
      for (int h = 0; h < T::kThreadN / 4; ++h) {
        const int col = block_col + b_off + h * T::kLanesN * 4;
        const float* v = &acc[4 * g + i][4 * h];
        if (kAligned && col < n) {
          float4 out = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
          if (beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4*>(c_row + col);
            out.x += beta * old.x;
            out.y += beta * old.y;
            out.z += beta * old.z;
            out.w += beta * old.w;
          }
          *reinterpret_cast<float4*>(c_row + col) = out;
        } else if (!kAligned) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            if (col + j < n) {
              c_row[col + j] = beta != 0.0f ? alpha * v[j] + beta * c_row[col + j] : alpha * v[j];
            }
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
  auto* kernel = aligned ? &sgemm_warp_tiled<T, true> : &sgemm_warp_tiled<T, false>;
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
      "bank-conflict-free warp tiling, BM x BN x BK = " + std::to_string(kTile.block_m) + "x" +
      std::to_string(kTile.block_n) + "x" + std::to_string(kTile.block_k) + ", warp " +
      std::to_string(kTile.warp_m) + "x" + std::to_string(kTile.warp_n) + ", thread " +
      std::to_string(kTile.thread_m) + "x" + std::to_string(kTile.thread_n);
  const sgemm::Chapter chapter{"05_bank_conflict", title.c_str(), &launch_tile<MainTile>,
                               kTile.block_m, kTile.block_n};
  return sgemm::run_chapter(chapter, argc, argv);
}
