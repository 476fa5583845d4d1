// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 11: TMA, the Tensor Memory Accelerator, and mbarriers (TF32).
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> 08 tensor cores -> 09 3xTF32
//   -> 10 wgmma -> [11 TMA]
//
// Chapter 10 loads every tile with cp.async: each of 256 threads computes a dozen addresses and
// bounds per tile, issues its copies, and swizzles A by hand. This chapter hands the loads to the
// Tensor Memory Accelerator, a copy engine in each SM. What changed since 10, and why:
// - A tensor map, built once per launch on the host, describes each matrix (base, extents, row
//   stride) and the box one copy brings (32 k x 256 rows of A; 32 k x 32 columns of B). One
//   thread issues a stage's five copies (cp.async.bulk.tensor); the other 255 issue none.
// - The copy engine writes the 128-byte swizzle itself, and fills elements outside the matrix
//   with zeros: the load side has no bounds checks and no edge-tile instantiations.
// - A stage has landed when its mbarrier has counted its bytes (expect-tx, then a parity wait),
//   not when a thread's commit group has drained: no cp.async groups, no per-thread waits.
// - B arrives as four 32-column boxes, each swizzled like A; a warp's register operand takes the
//   columns whose swizzled chunks cover all 32 banks (make_fragment_plan below).
// - TMA needs row strides that are multiples of 16 bytes: when K or N is not a multiple of 4 the
//   launcher first copies A or B into a workspace with padded rows (README.md, "Odd K and N").
// Unchanged from 10: C^T = B^T A^T with B^T from registers, 256 x 128 x 32 tiles, 4 stages, one
// tile of wgmma in flight, A rounded to TF32 in shared memory and B^T in registers.
// Precision contract: TF32 (verified with a TF32 tolerance, timed against cuBLAS
// CUBLAS_COMPUTE_32F_FAST_TF32).
// Limits: compute capability 9.0 with code built for sm_90a; elsewhere one error: line, exit 3.
// Example: build/bin/11_tma --size 4096

#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda_runtime.h>

#include "common/grid.h"
#include "common/harness.h"
#include "common/tf32.h"
#include "common/tma.h"
#include "common/wgmma.h"

// Tile shape (BM, BN, STAGES): 10's, README.md "Parameters and limits". The tuning build
// (-DSGEMM_TUNING=ON) compiles this file again with other SGEMM_TILE values.
#ifndef SGEMM_TILE
#define SGEMM_TILE 256, 128, 4
#endif
// SGEMM_ROUND_A_BEFORE: where A is rounded to TF32. 1: by a pass over A before the GEMM (the
// launcher's copy into the workspace), so the tiles TMA brings are ready for the tensor core; 0: in
// shared memory, each tile in place by the consumers, as in 10 (README.md, "Where A is rounded").
// SGEMM_ROUND_TF32 as in chapter 10: 1 sgemm::tf32_operand, 0 no rounding at all (built only to
// price it).
#ifndef SGEMM_ROUND_A_BEFORE
#define SGEMM_ROUND_A_BEFORE 1
#endif
#ifndef SGEMM_ROUND_TF32
#define SGEMM_ROUND_TF32 1
#endif

namespace {

using sgemm::ceil_div;

template <int kBlockM_, int kBlockN_, int kStages_>
struct HopperTile {
  static constexpr int kBlockM = kBlockM_;  // rows of C per block
  static constexpr int kBlockN = kBlockN_;  // columns of C per block
  static constexpr int kBlockK = 32;        // depth of one K tile: a 128-byte row of floats
  static constexpr int kStages = kStages_;  // K tiles held in shared memory at once
  static constexpr int kWgmmaM = 64;        // wgmma.m64n128k8: columns of C (rows of C^T) ...
  static constexpr int kWgmmaN = 128;       // ... rows of C ...
  static constexpr int kWgmmaK = 8;         // ... and k per instruction
  static constexpr int kRowBlocks = kBlockM / kWgmmaN;  // wgmma per warpgroup per k-step
  static constexpr int kKSteps = kBlockK / kWgmmaK;     // k-steps per K tile
  static constexpr int kWarpgroups = kBlockN / kWgmmaM;
  static constexpr int kThreads = 128 * kWarpgroups;

  // A stage: sA[m][k], kBlockM rows of 128 bytes, then B as kBoxesB boxes sB[k][n] of 32 x 32,
  // each row of 128 bytes; both swizzled by the copy engine. A box row is at most 128 bytes wide
  // under the 128-byte swizzle, hence B's boxes.
  static constexpr int kBoxN = 32;
  static constexpr int kBoxesB = kBlockN / kBoxN;
  static constexpr int kSizeA = kBlockM * kBlockK;
  static constexpr int kSizeBoxB = kBlockK * kBoxN;
  static constexpr int kStageFloats = kSizeA + kBlockN * kBlockK;
  // Bytes one stage's copies deliver: what its mbarrier expects.
  static constexpr int kStageBytes = kStageFloats * static_cast<int>(sizeof(float));
  // + 1024: the stages start on a 1024-byte boundary, where the swizzle pattern starts.
  static constexpr int kSmemBytes = kStages * kStageBytes + 1024;

  static_assert(kBlockM % kWgmmaN == 0 && kBlockN % kWgmmaM == 0, "whole wgmma tiles per block");
  static_assert(kBlockM <= 256, "a TMA box is at most 256 rows");
  static_assert(kSizeA % (4 * kThreads) == 0, "every thread rounds the same share of A");
  static_assert(kStageBytes % 1024 == 0, "every stage starts on 1024 bytes");
  static_assert(kStages >= 3, "stages in the tensor cores, one being prepared, one loading");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

using MainTile = HopperTile<SGEMM_TILE>;
// For problems where the big tile gives fewer blocks than half the SMs (chapter 10's rule).
using SmallTile = HopperTile<256, 64, 4>;

// x as a TF32 operand of the tensor core (chapter 10).
__device__ __forceinline__ uint32_t round_operand(float x) {
#if SGEMM_ROUND_TF32
  return sgemm::tf32_operand(x);
#else
  return __float_as_uint(x);
#endif
}

// Where a lane's register operand (B^T) lies in a stage's B boxes, and which columns of C it
// stands for. Lane (g, t) of warp w holds rows g and g + 8 of the warp's 16 rows of B^T at k t and
// t + 4 (mma.sync's A fragment); rows g and g + 8 are two neighbouring columns, one 8-byte load.
// Warp w takes box w / 2 of its warpgroup's two and, in that box, the 16-byte chunks q =
// {0, 4, 1, 5} (even w) or {2, 6, 3, 7} (odd w) for g / 2 = 0..3. Why those: the lanes of a
// half-warp (g = 0..3 or 4..7, t = 0..3) read rows t of the box, whose chunk q lies at q ^ t; with
// q in {0, 4} (or {1, 5}, ...) the four rows spread the lanes over all 8 chunks, all 32 banks.
struct FragmentPlan {
  int lo;   // offset in the stage's B of (k t, the lane's column pair)
  int hi;   // the same at k t + 4
  int col;  // column of C inside the block of register row g (row g + 8: col + 1)
};

template <class T>
__device__ __forceinline__ FragmentPlan make_fragment_plan(int warpgroup, int warp, int g, int t) {
  const int h = g / 2;
  const int q = 4 * (h % 2) + h / 2 + 2 * (warp % 2);  // the chunk, before the swizzle
  const int box = 2 * warpgroup + warp / 2;
  const int base = box * T::kSizeBoxB + 2 * (g % 2);
  FragmentPlan plan;
  plan.lo = base + t * T::kBoxN + 4 * (q ^ t);
  plan.hi = base + (t + 4) * T::kBoxN + 4 * (q ^ (t + 4));
  plan.col = T::kBoxN * box + 4 * q + 2 * (g % 2);
  return plan;
}

// One block per 256 x 128 tile of C, as in 10; block rows start at row0 + blockIdx.y * kBlockM
// (the launcher's slabs). kEvenN: N % 2 == 0, so a lane's pair of columns is one 8-byte store.
template <class T, bool kEvenN>
__global__ void __launch_bounds__(T::kThreads, 1)
    sgemm_tma(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
              int m, int n, int k, int row0, float alpha, float beta, float* __restrict__ C) {
#if !SGEMM_SM90A_BUILT
  __trap();  // built without sm_90a code: the harness exits 3 before any launch (unsupported)
#endif
  // Dynamic shared memory is only guaranteed 16-byte aligned; the swizzle needs 1024.
  extern __shared__ float4 smem_raw[];
  __shared__ uint64_t full[T::kStages];  // one mbarrier per stage: "its copies have landed"
  const uint32_t raw_base = sgemm::smem_address(smem_raw);
  const uint32_t pad = (1024 - raw_base % 1024) % 1024;
  float* const smem = reinterpret_cast<float*>(reinterpret_cast<char*>(smem_raw) + pad);
  const uint32_t smem_base = raw_base + pad;

  const int tid = threadIdx.x;
  const int block_row = row0 + blockIdx.y * T::kBlockM;
  const int block_col = blockIdx.x * T::kBlockN;
  const int warpgroup = tid / 128;
  const int warp = (tid % 128) / 32;  // inside the warpgroup
  const int lane = tid % 32;
  const int g = lane / 4;  // fragment row group (PTX: groupID)
  const int t = lane % 4;  // fragment column (PTX: threadID_in_group)
  const FragmentPlan frag_plan = make_fragment_plan<T>(warpgroup, warp, g, t);
  const int num_tiles = ceil_div(k, T::kBlockK);

  // Thread 0 sets the mbarriers up, each expecting one arrival (its own, with the byte count) per
  // phase, and makes them visible to the copy engine; the barrier makes them visible to all.
  if (tid == 0) {
    for (int s = 0; s < T::kStages; ++s) sgemm::mbarrier_init(&full[s], 1);
    sgemm::fence_mbarrier_init();
  }
  __syncthreads();

  // Issued by thread 0 alone: the stage's byte count, then its copies (the whole K tile of the
  // block: A's box at (block_row, k0), B's four boxes at (k0, block_col + 32 j)). Elements past M,
  // N or K arrive as zeros, so the last tile needs no special case.
  auto issue = [&](int tile) {
    const int stage = tile % T::kStages;
    float* sA = smem + stage * T::kStageFloats;
    const int k0 = tile * T::kBlockK;
    sgemm::mbarrier_arrive_expect_tx(&full[stage], T::kStageBytes);
    sgemm::tma_load_2d(sA, &map_a, block_row, k0, &full[stage]);
#pragma unroll
    for (int j = 0; j < T::kBoxesB; ++j) {
      sgemm::tma_load_2d(sA + T::kSizeA + j * T::kSizeBoxB, &map_b, k0, block_col + j * T::kBoxN,
                         &full[stage]);
    }
  };

  float acc[T::kRowBlocks][64] = {};
  uint32_t frag[2][T::kKSteps][4];  // two sets: chapter 10, exercise 1

  // Waits until the tile's bytes have landed: its stage's mbarrier finished the phase of this use
  // of the stage (the stage's (tile / kStages)-th use, so parity (tile / kStages) % 2). With A
  // rounded in shared memory (SGEMM_ROUND_A_BEFORE 0), then rounds a share of it in place and hands
  // it to the async proxy, as 10 does.
  auto prepare = [&](int tile) {
    const int stage = tile % T::kStages;
    float* sA = smem + stage * T::kStageFloats;
    sgemm::mbarrier_wait(&full[stage], (tile / T::kStages) % 2);
#if !SGEMM_ROUND_A_BEFORE && SGEMM_ROUND_TF32
    constexpr int kPasses = T::kSizeA / 4 / T::kThreads;  // float4s of A per thread
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      float4* chunk = reinterpret_cast<float4*>(sA) + tid + i * T::kThreads;
      float4 v = *chunk;
      v.x = __uint_as_float(round_operand(v.x));
      v.y = __uint_as_float(round_operand(v.y));
      v.z = __uint_as_float(round_operand(v.z));
      v.w = __uint_as_float(round_operand(v.w));
      *chunk = v;
    }
    sgemm::fence_proxy_async();
#endif
  };

  // Loads the tile's register operand (fragment set P) and issues its wgmma, one group.
  auto multiply = [&](int tile, auto parity) {
    constexpr int P = decltype(parity)::value;
    const int stage = tile % T::kStages;
    const float* b_stage = smem + stage * T::kStageFloats + T::kSizeA;
#pragma unroll
    for (int s = 0; s < T::kKSteps; ++s) {
      // Rows 8s + t and 8s + t + 4 of every box: 8 rows on, the swizzle pattern repeats.
      const float2 lo = *reinterpret_cast<const float2*>(b_stage + frag_plan.lo + 8 * s * T::kBoxN);
      const float2 hi = *reinterpret_cast<const float2*>(b_stage + frag_plan.hi + 8 * s * T::kBoxN);
      frag[P][s][0] = round_operand(lo.x);
      frag[P][s][1] = round_operand(lo.y);
      frag[P][s][2] = round_operand(hi.x);
      frag[P][s][3] = round_operand(hi.y);
    }
    const uint64_t desc =
        sgemm::smem_descriptor_sw128(smem_base + stage * T::kStageFloats * sizeof(float));
    uint64_t descs[T::kKSteps][T::kRowBlocks];
#pragma unroll
    for (int s = 0; s < T::kKSteps; ++s) {
#pragma unroll
      for (int i = 0; i < T::kRowBlocks; ++i) {
        descs[s][i] = desc + (i * T::kWgmmaN * T::kBlockK + T::kWgmmaK * s) * sizeof(float) / 16;
        asm volatile("" : "+l"(descs[s][i])::"memory");
      }
      sgemm::pin(frag[P][s]);
    }
#pragma unroll
    for (int i = 0; i < T::kRowBlocks; ++i) sgemm::pin(acc[i]);
    sgemm::wgmma_fence();
#pragma unroll
    for (int s = 0; s < T::kKSteps; ++s) {
#pragma unroll
      for (int i = 0; i < T::kRowBlocks; ++i) {
        sgemm::wgmma_m64n128k8_tf32(acc[i], frag[P][s], descs[s][i]);
      }
    }
    sgemm::wgmma_commit();
  };

  // 10's order: tile t is prepared while tile t - 1's wgmma run. The copies run kStages - 2 tiles
  // ahead: one stage is being read by the tile prepared now, one by the wgmma still running.
  // Thread 0 issues them; nobody else touches a copy.
  constexpr int kAhead = T::kStages - 2;
  if (tid == 0) {
    for (int s = 0; s < kAhead && s < num_tiles; ++s) issue(s);
  }
  auto step = [&](int tile, auto parity) {
    prepare(tile);
    sgemm::wgmma_wait<1>();
    // Every share of A is rounded, and every warpgroup is done with the stage refilled below.
    __syncthreads();
    if (tid == 0 && tile + kAhead < num_tiles) issue(tile + kAhead);
    multiply(tile, parity);
  };

  for (int tile = 0; tile < num_tiles; tile += 2) {
    step(tile, std::integral_constant<int, 0>{});
    if (tile + 1 < num_tiles) step(tile + 1, std::integral_constant<int, 1>{});
  }
  sgemm::wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < T::kRowBlocks; ++i) sgemm::pin(acc[i]);

  // Epilogue, as in 10 with the fragment plan's columns: acc[i][4j + e] is C at row
  // kWgmmaN i + 8j + 2t + e % 2, column col + e / 2.
  const int col = block_col + frag_plan.col;
#pragma unroll
  for (int i = 0; i < T::kRowBlocks; ++i) {
#pragma unroll
    for (int j = 0; j < T::kWgmmaN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int row = block_row + i * T::kWgmmaN + 8 * j + 2 * t + e;
        if (row >= m || col >= n) continue;
        float* c = C + static_cast<int64_t>(row) * n + col;
        const float v0 = alpha * acc[i][4 * j + e];
        const float v1 = alpha * acc[i][4 * j + e + 2];
        if (kEvenN) {
          // N even: col < n implies col + 1 < n, and the pair starts on 8 bytes.
          float2 out = make_float2(v0, v1);
          if (beta != 0.0f) {
            const float2 old = *reinterpret_cast<const float2*>(c);
            out.x += beta * old.x;
            out.y += beta * old.y;
          }
          *reinterpret_cast<float2*>(c) = out;
        } else {
          c[0] = beta != 0.0f ? v0 + beta * c[0] : v0;
          if (col + 1 < n) c[1] = beta != 0.0f ? v1 + beta * c[1] : v1;
        }
      }
    }
  }
}

// A rounded before the GEMM: only with a rounding the tensor core needs (the no-rounding build
// prices rounding altogether).
constexpr bool kRoundABefore = SGEMM_ROUND_A_BEFORE && SGEMM_ROUND_TF32;

// The launcher's workspace: the copy of A (rounded, rows padded to 16 bytes) and, when N % 4 != 0,
// of B (padded).
size_t workspace_bytes(const sgemm::Problem& p) {
  return sgemm::tma_copy_bytes(p.m, p.k, kRoundABefore) + sgemm::tma_copy_bytes(p.k, p.n, false);
}

template <class T>
void launch_tile(const sgemm::Problem& p, const float* A, const float* B, float* C,
                 cudaStream_t stream) {
  // A rounded to TF32 and B as TMA can read them (README.md, "Where A is rounded", "Odd K and N"),
  // then one tensor map per matrix.
  char* workspace = static_cast<char*>(p.workspace);
  const float* a = sgemm::tma_readable(A, p.m, p.k, kRoundABefore, &workspace, stream);
  const float* b = sgemm::tma_readable(B, p.k, p.n, false, &workspace, stream);
  const CUtensorMap map_a =
      sgemm::tensor_map_2d(a, p.m, p.k, sgemm::tma_row_stride(p.k), T::kBlockM, T::kBlockK);
  const CUtensorMap map_b =
      sgemm::tensor_map_2d(b, p.k, p.n, sgemm::tma_row_stride(p.n), T::kBlockK, T::kBoxN);

  using Kernel = void(CUtensorMap, CUtensorMap, int, int, int, int, float, float, float*);
  Kernel* const kernels[2] = {&sgemm_tma<T, false>, &sgemm_tma<T, true>};  // [N % 2 == 0]
  static const bool raised = [&] {
    for (Kernel* kernel : kernels) {
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
    }
    return true;
  }();
  (void)raised;
  Kernel* kernel = kernels[p.n % 2 == 0];
  sgemm::for_each_row_slab(p, T::kBlockM, [&](int64_t row0, int rows) {
    const dim3 grid(ceil_div(p.n, T::kBlockN), ceil_div(rows, T::kBlockM));
    kernel<<<grid, T::kThreads, T::kSmemBytes, stream>>>(
        map_a, map_b, p.m, p.n, p.k, static_cast<int>(row0), p.alpha, p.beta, C);
  });
}

// The big tile unless it gives fewer blocks than half the SMs (chapter 10's rule).
bool takes_small_tile(const sgemm::Problem& p) {
  const int64_t blocks =
      static_cast<int64_t>(ceil_div(p.m, MainTile::kBlockM)) * ceil_div(p.n, MainTile::kBlockN);
  return blocks < sgemm::sm_count() / 2;
}

void launch_tma(const sgemm::Problem& p, const float* A, const float* B, float* C,
                cudaStream_t stream) {
  if (takes_small_tile(p)) {
    launch_tile<SmallTile>(p, A, B, C, stream);
  } else {
    launch_tile<MainTile>(p, A, B, C, stream);
  }
}

sgemm::TileSize tile_for(const sgemm::Problem& p) {
  return takes_small_tile(p) ? sgemm::TileSize{SmallTile::kBlockM, SmallTile::kBlockN}
                             : sgemm::TileSize{MainTile::kBlockM, MainTile::kBlockN};
}

}  // namespace

int main(int argc, char** argv) {
  static const std::string title =
      "TMA copies completing on mbarriers (wgmma TF32 as in 10), BM x BN x BK = " +
      std::to_string(MainTile::kBlockM) + "x" + std::to_string(MainTile::kBlockN) + "x" +
      std::to_string(MainTile::kBlockK) + ", " + std::to_string(MainTile::kStages) + " stages";
  sgemm::Chapter chapter{"11_tma",          title.c_str(),     &launch_tma,
                         MainTile::kBlockM, MainTile::kBlockN, &tile_for};
  chapter.precision = sgemm::Precision::kTf32;
  chapter.workspace_bytes = &workspace_bytes;
  chapter.unsupported = &sgemm::sm90a_unsupported;
  return sgemm::run_chapter(chapter, argc, argv);
}
