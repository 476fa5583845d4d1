// SPDX-License-Identifier: MIT
// What split-K's second kernel costs on this GPU: chapter 07's launcher model charges every plan
// that cuts K a second launch and the bytes its reduction moves, at a share of the DRAM
// bandwidth that is higher while the partial sums still sit in L2. This benchmark times that
// reduction, common/split_k.h's reduce_split_k_slices (the kernel chapters 07, 08 and 09
// launch), so that scripts/calibrate_07.py can read the model's three split-K constants from it
// instead of guessing them. Not a chapter and not a test: a microbenchmark, bin/split_k_bench.
//
// Each case runs, back to back in one stream, kIters times a spin of kSpinSeconds and the slices'
// writes (a plain kernel, as the GEMM's epilogue leaves them: what fits in L2 is in L2), and
// kIters times the same each followed by the reduction; the reduction's cost is the difference
// per iteration (median of kRepeats, after a warm-up). The spin keeps the GPU busy while the host
// enqueues the next kernels, as a GEMM does: the difference is what a second kernel adds on the
// GPU, not the host's launch rate (a loop of tiny kernels times that instead). One line per case,
// then the GPU's data-sheet DRAM bandwidth and L2 size:
//   case m=<M> n=<N> splits=<s> bytes=<read + written> footprint=<slices' bytes> us=<per reduction>
//   device dram_gbs=<data sheet> l2_bytes=<L2 size>
// Usage: split_k_bench   Exit codes: 0 ran, 3 CUDA failure (no GPU included).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_check.h"
#include "common/roofline.h"
#include "common/split_k.h"

namespace {

constexpr int kIters = 20;  // iterations per timed loop
constexpr double kSpinSeconds = 20e-6;
constexpr int kRepeats = 9;  // timed loops of each kind, median

// The partial sums as a GEMM's split kernel leaves them: every slice written once, last.
__global__ void write_slices(int64_t floats, float* out) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < floats;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = static_cast<float>(i & 1023) * 0.5f;
  }
}

// One thread that waits `clocks` SM clocks.
__global__ void spin(long long clocks) {
  const long long start = clock64();
  while (clock64() - start < clocks) {
  }
}

struct Case {
  int m, n, splits;
};

}  // namespace

int main() {
  int device = 0, count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "error: no CUDA GPU found\n");
    return 3;
  }
  CHECK(cudaSetDevice(device));
  int mem_khz = 0, bus_bits = 0, l2 = 0, sms = 0, sm_khz = 0;
  CHECK(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device));
  const long long spin_clocks = static_cast<long long>(kSpinSeconds * sm_khz * 1e3);
  CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device));
  CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const double dram = sgemm::dram_bandwidth_bytes(mem_khz * 1e3, bus_bits);

  // A 4 x 4 C: nothing but the launch. Then slices that fit in L2 many times over, about half
  // of it, and many times its size, so the script can tell the two regimes apart.
  const std::vector<Case> cases = {
      {4, 4, 2},       {512, 512, 4},   {1024, 1024, 2}, {1024, 1024, 4},  {768, 768, 16},
      {2048, 2048, 2}, {4096, 4096, 2}, {4096, 4096, 4}, {2048, 2048, 32}, {8192, 8192, 2}};
  size_t most = 0;
  for (const Case& c : cases) {
    sgemm::Problem p{};
    p.m = c.m;
    p.n = c.n;
    most = std::max(most, static_cast<size_t>(c.splits + 1) * sgemm::split_k_slice_floats(p));
  }
  float* buffer = nullptr;
  CHECK(cudaMalloc(&buffer, most * sizeof(float)));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  for (const Case& c : cases) {
    sgemm::Problem p{};
    p.m = c.m;
    p.n = c.n;
    p.k = c.splits;
    p.alpha = 1.0f;
    p.beta = 0.0f;
    const int64_t slice = sgemm::split_k_slice_floats(p);
    const int64_t partial = slice * c.splits;
    float* C = buffer + partial;
    // Loop `reduce` = false: the writes alone; true: each write followed by the reduction.
    const auto loop_ms = [&](bool reduce) {
      CHECK(cudaEventRecord(start));
      for (int i = 0; i < kIters; ++i) {
        spin<<<1, 1>>>(spin_clocks);
        write_slices<<<4 * sms, 256>>>(partial, buffer);
        if (reduce) sgemm::reduce_split_k_slices(p, c.splits, buffer, C, nullptr);
      }
      CHECK(cudaGetLastError());
      CHECK(cudaEventRecord(stop));
      CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, stop));
      return ms;
    };
    std::vector<float> alone, with;
    loop_ms(true);  // warm-up
    for (int r = 0; r < kRepeats; ++r) {
      alone.push_back(loop_ms(false));
      with.push_back(loop_ms(true));
    }
    std::sort(alone.begin(), alone.end());
    std::sort(with.begin(), with.end());
    const double reduce_us = 1e3 * (with[kRepeats / 2] - alone[kRepeats / 2]) / kIters;
    const double elements = static_cast<double>(c.m) * c.n;
    std::printf("case m=%d n=%d splits=%d bytes=%.0f footprint=%.0f us=%.3f\n", c.m, c.n, c.splits,
                4.0 * elements * (c.splits + 1), 4.0 * elements * c.splits, reduce_us);
  }
  std::printf("device dram_gbs=%.1f l2_bytes=%d\n", dram / 1e9, l2);
  CHECK(cudaFree(buffer));
  return 0;
}
