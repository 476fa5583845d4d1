// SPDX-License-Identifier: MIT
// SGEMM tutorial, chapter 12: warp specialization, producers and consumers (TF32).
//
//   00 naive -> 01 coalescing -> 02 smem tiling -> 03 thread tiling -> 04 vectorized
//   -> 05 bank conflicts -> 06 double buffer -> 07 any shape -> 08 tensor cores -> 09 3xTF32
//   -> 10 wgmma -> 11 TMA -> [12 warp specialization]
//
// In chapter 11 every warp does everything in turn: it waits for a tile, meets the others at
// __syncthreads, loads its register operand and issues wgmma; whatever one warp waits for, all
// wait for, and thread 0 issues the next copies only after that barrier. This chapter gives the
// jobs to different warpgroups, which meet only at mbarriers:
// - Warpgroup 0 produces: one of its threads issues the TMA copies into a ring of stages, as far
//   ahead as the ring allows.
// - Warpgroups 1 and 2 consume: each waits for a stage, loads its B^T fragments, issues wgmma
//   over the whole A tile and hands the stage back as soon as its wgmma have read it.
// - Two mbarriers per stage pass it around the ring: full (the copy engine counted its bytes) and
//   empty (every consumer warp is done with it).
// - setmaxnreg moves registers from the producer, which needs few, to the consumers, whose
//   accumulators need many; without it ptxas serializes the consumers' wgmma.
// Unchanged from 11: A rounded to TF32 by a pass before the GEMM, tensor maps and swizzled boxes,
// C^T = B^T A^T with B^T from registers, the 256 x 128 x 32 tile and 4 stages, the epilogue.
// Precision contract: TF32 (verified with a TF32 tolerance, timed against cuBLAS
// CUBLAS_COMPUTE_32F_FAST_TF32).
// Limits: compute capability 9.0 with code built for sm_90a; elsewhere one error: line, exit 3.
// Example: build/bin/12_warp_specialization --size 4096

#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda_runtime.h>

#include "common/grid.h"
#include "common/harness.h"
#include "common/tf32.h"
#include "common/tma.h"
#include "common/wgmma.h"

// Tile (BM, consumer warpgroups, STAGES): a consumer warpgroup owns 64 columns of C, so BN is 64
// per consumer. README.md, "Parameters and limits"; the tuning build compiles other values.
#ifndef SGEMM_TILE
#define SGEMM_TILE 256, 2, 4
#endif
// SGEMM_REGISTER_SPLIT (README.md, "Attribution"): 1 setmaxnreg moves registers to the
// consumers; 0 every thread keeps the 65536 / threads the launch bounds leave.
#ifndef SGEMM_REGISTER_SPLIT
#define SGEMM_REGISTER_SPLIT 1
#endif
// SGEMM_ROUND_TF32 as in chapter 10: 1 sgemm::tf32_operand, 0 no rounding (built only to price it).
#ifndef SGEMM_ROUND_TF32
#define SGEMM_ROUND_TF32 1
#endif

namespace {

using sgemm::ceil_div;

template <int kBlockM_, int kConsumers_, int kStages_>
struct WarpSpecializedTile {
  static constexpr int kBlockM = kBlockM_;        // rows of C per block
  static constexpr int kConsumers = kConsumers_;  // consumer warpgroups
  static constexpr int kWgmmaM = 64;              // wgmma.m64n128k8: columns of C (rows of C^T) ...
  static constexpr int kBlockN = kWgmmaM * kConsumers;  // columns of C per block
  static constexpr int kBlockK = 32;        // depth of one K tile: a 128-byte row of floats
  static constexpr int kStages = kStages_;  // the ring
  static constexpr int kWgmmaN = 128;       // ... rows of C ...
  static constexpr int kWgmmaK = 8;         // ... and k per instruction
  static constexpr int kRowBlocks = kBlockM / kWgmmaN;
  static constexpr int kKSteps = kBlockK / kWgmmaK;
  static constexpr int kThreads = 128 * (1 + kConsumers);  // the producer, then the consumers

  // A stage as in 11: sA (kBlockM rows of 128 bytes), then B's 32 x 32 boxes.
  static constexpr int kBoxN = 32;
  static constexpr int kBoxesB = kBlockN / kBoxN;
  static constexpr int kSizeA = kBlockM * kBlockK;
  static constexpr int kSizeBoxB = kBlockK * kBoxN;
  static constexpr int kStageFloats = kSizeA + kBlockN * kBlockK;
  static constexpr int kStageBytes = kStageFloats * static_cast<int>(sizeof(float));
  static constexpr int kSmemBytes = kStages * kStageBytes + 1024;

  // Registers per thread after setmaxnreg. A block starts with the registers its launch bounds
  // allow every thread, kLaunchRegisters (65536 / kThreads in steps of 8, at most 255); setmaxnreg
  // only moves them between warpgroups: what the producer hands back is all the consumers can take
  // (an inc that asks for more waits forever). The producer keeps what its copy loop needs; the
  // consumers share the rest.
  static constexpr int kLaunchRegisters = (65536 / kThreads > 255 ? 255 : 65536 / kThreads) / 8 * 8;
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters =
      ((1 + kConsumers) * kLaunchRegisters - kProducerRegisters) / kConsumers / 8 * 8 > 240
          ? 240
          : ((1 + kConsumers) * kLaunchRegisters - kProducerRegisters) / kConsumers / 8 * 8;

  static_assert(kProducerRegisters + kConsumers * kConsumerRegisters <=
                    (1 + kConsumers) * kLaunchRegisters,
                "the consumers take no more registers than the producer hands back");
  static_assert(kBlockM % kWgmmaN == 0, "whole wgmma tiles per block");
  static_assert(kBlockM <= 256, "a TMA box is at most 256 rows");
  static_assert(kStageBytes % 1024 == 0, "every stage starts on 1024 bytes");
  static_assert(kStages >= 2, "a ring");
  static_assert(kSmemBytes <= 227 * 1024, "shared memory per block is limited to 227 KB");
};

using MainTile = WarpSpecializedTile<SGEMM_TILE>;
// For problems where the big tile gives fewer blocks than half the SMs (chapter 10's rule).
using SmallTile = WarpSpecializedTile<256, 1, 4>;

__device__ __forceinline__ uint32_t round_operand(float x) {
#if SGEMM_ROUND_TF32
  return sgemm::tf32_operand(x);
#else
  return __float_as_uint(x);
#endif
}

// Where a lane's register operand lies in a stage's B boxes, and which columns of C it stands for:
// chapter 11, make_fragment_plan (a consumer warpgroup there is a warpgroup here).
struct FragmentPlan {
  int lo;
  int hi;
  int col;
};

template <class T>
__device__ __forceinline__ FragmentPlan make_fragment_plan(int consumer, int warp, int g, int t) {
  const int h = g / 2;
  const int q = 4 * (h % 2) + h / 2 + 2 * (warp % 2);
  const int box = 2 * consumer + warp / 2;
  const int base = box * T::kSizeBoxB + 2 * (g % 2);
  FragmentPlan plan;
  plan.lo = base + t * T::kBoxN + 4 * (q ^ t);
  plan.hi = base + (t + 4) * T::kBoxN + 4 * (q ^ (t + 4));
  plan.col = T::kBoxN * box + 4 * q + 2 * (g % 2);
  return plan;
}

// One block per 256 x 128 tile of C (rows from row0 + blockIdx.y * kBlockM, the launcher's slabs).
template <class T, bool kEvenN>
__global__ void __launch_bounds__(T::kThreads, 1)
    sgemm_ws(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
             int m, int n, int k, int row0, float alpha, float beta, float* __restrict__ C) {
#if !SGEMM_SM90A_BUILT
  __trap();  // built without sm_90a code: the harness exits 3 before any launch (unsupported)
#endif
  extern __shared__ float4 smem_raw[];
  // Per stage: full (its bytes landed: one arrival, the producer's, plus the byte count) and empty
  // (every consumer warp is done with it: one arrival per warp).
  __shared__ uint64_t full[T::kStages], empty[T::kStages];
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
  const int num_tiles = ceil_div(k, T::kBlockK);

  if (tid == 0) {
    for (int s = 0; s < T::kStages; ++s) {
      sgemm::mbarrier_init(&full[s], 1);
      sgemm::mbarrier_init(&empty[s], 4 * T::kConsumers);
    }
    sgemm::fence_mbarrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---- The producer warpgroup ----
#if SGEMM_REGISTER_SPLIT
    sgemm::setmaxnreg_dec<T::kProducerRegisters>();
#endif
    // One thread issues the copies: tile t goes to stage t % kStages once the consumers have
    // handed back that stage's previous tile, t - kStages (its (t / kStages - 1)-th use: that
    // parity).
    if (tid != 0) return;
    for (int tile = 0; tile < num_tiles; ++tile) {
      const int stage = tile % T::kStages;
      if (tile >= T::kStages) sgemm::mbarrier_wait(&empty[stage], (tile / T::kStages - 1) % 2);
      float* sA = smem + stage * T::kStageFloats;
      const int k0 = tile * T::kBlockK;
      sgemm::mbarrier_arrive_expect_tx(&full[stage], T::kStageBytes);
      sgemm::tma_load_2d(sA, &map_a, block_row, k0, &full[stage]);
#pragma unroll
      for (int j = 0; j < T::kBoxesB; ++j) {
        sgemm::tma_load_2d(sA + T::kSizeA + j * T::kSizeBoxB, &map_b, k0, block_col + j * T::kBoxN,
                           &full[stage]);
      }
    }
    return;
  }

  // ---- The consumer warpgroups ----
#if SGEMM_REGISTER_SPLIT
  sgemm::setmaxnreg_inc<T::kConsumerRegisters>();
#endif
  const int consumer = warpgroup - 1;
  const int g = lane / 4;
  const int t = lane % 4;
  const FragmentPlan frag_plan = make_fragment_plan<T>(consumer, warp, g, t);
  float acc[T::kRowBlocks][64] = {};
  uint32_t frag[2][T::kKSteps][4];

  auto step = [&](int tile, auto parity) {
    constexpr int P = decltype(parity)::value;
    const int stage = tile % T::kStages;
    float* sA = smem + stage * T::kStageFloats;
    sgemm::mbarrier_wait(&full[stage], (tile / T::kStages) % 2);
    const float* b_stage = sA + T::kSizeA;
#pragma unroll
    for (int s = 0; s < T::kKSteps; ++s) {
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
    // The previous tile's wgmma are done (this tile's may run on): that stage goes back to the
    // producer, one arrival per warp.
    sgemm::wgmma_wait<1>();
    if (tile > 0 && lane == 0) sgemm::mbarrier_arrive(&empty[(tile - 1) % T::kStages]);
  };

  for (int tile = 0; tile < num_tiles; tile += 2) {
    step(tile, std::integral_constant<int, 0>{});
    if (tile + 1 < num_tiles) step(tile + 1, std::integral_constant<int, 1>{});
  }
  sgemm::wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < T::kRowBlocks; ++i) sgemm::pin(acc[i]);

  // Epilogue, as in 11.
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

// A rounded by a pass before the GEMM, as in 11 (unless the build does not round at all).
constexpr bool kRoundABefore = SGEMM_ROUND_TF32;

// The launcher's workspace: A's rounded copy, and B's padded one when N % 4 != 0 (chapter 11).
size_t workspace_bytes(const sgemm::Problem& p) {
  return sgemm::tma_copy_bytes(p.m, p.k, kRoundABefore) + sgemm::tma_copy_bytes(p.k, p.n, false);
}

template <class T>
void launch_tile(const sgemm::Problem& p, const float* A, const float* B, float* C,
                 cudaStream_t stream) {
  // A rounded to TF32 and B as TMA reads them (chapter 11), then one tensor map per matrix.
  char* workspace = static_cast<char*>(p.workspace);
  const float* a = sgemm::tma_readable(A, p.m, p.k, kRoundABefore, &workspace, stream);
  const float* b = sgemm::tma_readable(B, p.k, p.n, false, &workspace, stream);
  const CUtensorMap map_a =
      sgemm::tensor_map_2d(a, p.m, p.k, sgemm::tma_row_stride(p.k), T::kBlockM, T::kBlockK);
  const CUtensorMap map_b =
      sgemm::tensor_map_2d(b, p.k, p.n, sgemm::tma_row_stride(p.n), T::kBlockK, T::kBoxN);

  using Kernel = void(CUtensorMap, CUtensorMap, int, int, int, int, float, float, float*);
  Kernel* const kernels[2] = {&sgemm_ws<T, false>, &sgemm_ws<T, true>};  // [N % 2 == 0]
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

bool takes_small_tile(const sgemm::Problem& p) {
  const int64_t blocks =
      static_cast<int64_t>(ceil_div(p.m, MainTile::kBlockM)) * ceil_div(p.n, MainTile::kBlockN);
  return blocks < sgemm::sm_count() / 2;
}

void launch_ws(const sgemm::Problem& p, const float* A, const float* B, float* C,
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
      "warp specialization: a TMA producer, " + std::to_string(MainTile::kConsumers) +
      " wgmma consumer warpgroups, full/empty mbarriers, BM x BN x BK = " +
      std::to_string(MainTile::kBlockM) + "x" + std::to_string(MainTile::kBlockN) + "x" +
      std::to_string(MainTile::kBlockK) + ", " + std::to_string(MainTile::kStages) + " stages";
  sgemm::Chapter chapter{"12_warp_specialization", title.c_str(),     &launch_ws,
                         MainTile::kBlockM,        MainTile::kBlockN, &tile_for};
  chapter.precision = sgemm::Precision::kTf32;
  chapter.workspace_bytes = &workspace_bytes;
  chapter.unsupported = &sgemm::sm90a_unsupported;
  return sgemm::run_chapter(chapter, argc, argv);
}
