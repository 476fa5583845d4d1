// SPDX-License-Identifier: MIT
// The ceiling of warp-level tensor-core instructions (mma.sync) on this GPU: how many TFLOP/s a
// kernel that does nothing but mma.sync reaches, with operands already in registers. Chapters 08
// (TF32) and 09 (3xTF32: three TF32 products per multiply-add) are measured against it in their
// READMEs. Not a chapter and not a test: a microbenchmark, built as bin/mma_ceiling.
//
// Each warp runs kChains independent accumulators (enough to cover the instruction's latency)
// through `iters` rounds; blocks of `warps` warps, `blocks_per_sm` per SM. The best of a small
// sweep over warps per SM is the ceiling. Timing: CUDA events, one warm-up launch, median of 7.
// Usage: mma_ceiling [iters]   (default 4096)
// Exit codes: 0 ran, 2 bad usage, 3 CUDA failure.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_check.h"

namespace {

constexpr int kChains = 8;  // independent accumulators per warp

enum class Kind { kTf32M16N8K8, kF16M16N8K16 };

template <Kind kKind>
__global__ void mma_loop(int iters, float* out) {
  // Operands: arbitrary finite values that differ per lane, so nothing folds to a constant.
  const uint32_t lane = threadIdx.x % 32;
  uint32_t a[4], b[2];
  for (int r = 0; r < 4; ++r) a[r] = 0x3f800000u + ((lane * 4 + r) << 13);  // ~1.x in TF32
  for (int r = 0; r < 2; ++r) b[r] = 0x3c003c00u + lane + r;                // ~1/256 in FP16
  if constexpr (kKind == Kind::kTf32M16N8K8) {
    b[0] = 0x3b800000u + (lane << 13);
    b[1] = 0x3b800000u + ((lane + 7) << 13);
  }
  float acc[kChains][4] = {};
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      if constexpr (kKind == Kind::kTf32M16N8K8) {
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
            "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
            "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      }
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) sum += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;  // keeps the loop alive
}

struct Result {
  double tflops;
  double ms;
};

template <Kind kKind>
Result measure(int iters, int sms, int warps_per_block, int blocks_per_sm, float* out) {
  const int blocks = sms * blocks_per_sm;
  const int threads = 32 * warps_per_block;
  const double mma_flops = kKind == Kind::kTf32M16N8K8 ? 2.0 * 16 * 8 * 8 : 2.0 * 16 * 8 * 16;
  const double flops =
      mma_flops * kChains * iters * (static_cast<double>(blocks) * warps_per_block);
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  mma_loop<kKind><<<blocks, threads>>>(iters, out);  // warm-up
  CHECK(cudaGetLastError());
  std::vector<float> ms(7);
  for (float& sample : ms) {
    CHECK(cudaEventRecord(start));
    mma_loop<kKind><<<blocks, threads>>>(iters, out);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    CHECK(cudaEventElapsedTime(&sample, start, stop));
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  return {flops / (median * 1e-3) / 1e12, median};
}

template <Kind kKind>
double sweep(const char* name, int iters, int sms, float* out) {
  double best = 0.0;
  // (warps per block, blocks per SM): 4, 8, 16 and 32 warps per SM.
  const int configs[][2] = {{4, 1}, {8, 1}, {4, 4}, {8, 2}, {16, 1}, {8, 4}};
  for (const auto& c : configs) {
    const Result r = measure<kKind>(iters, sms, c[0], c[1], out);
    std::printf("%-28s %2d warps/SM (%2d x %d)  %8.3f ms  %7.1f TFLOP/s\n", name, c[0] * c[1], c[0],
                c[1], r.ms, r.tflops);
    best = std::max(best, r.tflops);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 4096;
  if (argc > 2 || (argc == 2 && (iters = std::atoi(argv[1])) < 1)) {
    std::fprintf(stderr, "error: usage: mma_ceiling [iters >= 1]\n");
    return 2;
  }
  int device = 0, sms = 0, clock_khz = 0, major = 0, minor = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, device));
  if (major < 8) {
    std::fprintf(stderr, "error: TF32 mma.sync needs compute capability 8.0 or newer (got %d.%d)\n",
                 major, minor);
    return 3;
  }
  std::printf("device: %s, %d SMs, max clock %.0f MHz; %d x %d mma per warp and launch\n",
              prop.name, sms, clock_khz / 1e3, kChains, iters);
  float* out = nullptr;
  CHECK(cudaMalloc(&out, sizeof(float) * sms * 16 * 32 * 4));
  const double tf32 = sweep<Kind::kTf32M16N8K8>("mma m16n8k8 tf32 (f32 acc)", iters, sms, out);
  const double f16 = sweep<Kind::kF16M16N8K16>("mma m16n8k16 f16 (f32 acc)", iters, sms, out);
  CHECK(cudaFree(out));
  const double per_clock = tf32 * 1e12 / (sms * clock_khz * 1e3);
  std::printf(
      "ceiling: tf32 m16n8k8 %.1f TFLOP/s (%.0f FLOP/clock/SM at the max clock), "
      "f16 m16n8k16 %.1f TFLOP/s; 3xTF32 (3 mma per product) at most %.1f TFLOP/s\n",
      tf32, per_clock, f16, tf32 / 3.0);
  return 0;
}
