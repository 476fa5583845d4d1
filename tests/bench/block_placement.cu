// SPDX-License-Identifier: MIT
// Where the block scheduler puts a grid's blocks: how many of them each SM holds at once. Chapter
// 07's launcher model assumes the busiest SM holds ceil(blocks / SMs) (07_any_shape/README.md,
// "Deep slices on a small C"); this measures it. Not a chapter and not a test: a microbenchmark,
// built as bin/block_placement.
//
// Each block records its SM (%smid) and its start time (%globaltimer), then spins for about a
// millisecond, so every block that fits is resident at once. Blocks that start within 0.3 ms of
// the first are the first wave; the line per grid gives how many SMs hold 0, 1, ... of them, and
// the fewest and most blocks any SM ran in all. Occupancy is set by the launch's dynamic shared
// memory, which the kernel never touches: `threads` threads and `smem` bytes per block (64 and
// 26000 give 8 blocks per SM on the H100, as chapter 07's 64 x 64 tile; 128 and 55000 give 4; 256
// and 110000 give 2). Usage: block_placement <threads> <smem bytes> <blocks> [<blocks> ...] Exit
// codes: 0 ran, 2 bad usage, 3 CUDA failure.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_check.h"

namespace {

constexpr long long kSpinCycles = 2000000;           // about 1 ms at 2 GHz
constexpr unsigned long long kFirstWaveNs = 300000;  // started within 0.3 ms of the first block

__global__ void record(unsigned* sm_of, unsigned long long* start_of) {
  unsigned sm;
  unsigned long long start;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  const long long t0 = clock64();
  while (clock64() - t0 < kSpinCycles) {
  }
  if (threadIdx.x == 0) {
    sm_of[blockIdx.x] = sm;
    start_of[blockIdx.x] = start;
  }
}

// A positive integer no larger than `most`, or -1.
int parse(const char* text, int most) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && v >= 1 && v <= most ? static_cast<int>(v) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int kMaxBlocks = 1 << 20;
  const int threads = argc > 3 ? parse(argv[1], 1024) : -1;
  const int smem = argc > 3 ? parse(argv[2], 227 * 1024) : -1;
  std::vector<int> grids;
  for (int a = 3; a < argc; ++a) grids.push_back(parse(argv[a], kMaxBlocks));
  if (threads < 0 || smem < 0 ||
      std::any_of(grids.begin(), grids.end(), [](int b) { return b < 0; })) {
    std::fprintf(stderr,
                 "error: usage: block_placement <threads 1-1024> <smem bytes 1-232448> "
                 "<blocks 1-%d> [<blocks> ...]\n",
                 kMaxBlocks);
    return 2;
  }
  int device = 0, sms = 0, occupancy = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK(cudaFuncSetAttribute(record, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occupancy, record, threads, smem));
  std::printf("threads %d, shared memory %d bytes: %d blocks per SM, %d SMs\n", threads, smem,
              occupancy, sms);
  const int most = *std::max_element(grids.begin(), grids.end());
  unsigned* sm_of = nullptr;
  unsigned long long* start_of = nullptr;
  CHECK(cudaMalloc(&sm_of, sizeof(unsigned) * most));
  CHECK(cudaMalloc(&start_of, sizeof(unsigned long long) * most));
  for (const int blocks : grids) {
    record<<<blocks, threads, smem>>>(sm_of, start_of);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> sm(blocks);
    std::vector<unsigned long long> start(blocks);
    CHECK(cudaMemcpy(sm.data(), sm_of, sizeof(unsigned) * blocks, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(start.data(), start_of, sizeof(unsigned long long) * blocks,
                     cudaMemcpyDeviceToHost));
    const unsigned long long first = *std::min_element(start.begin(), start.end());
    std::vector<int> wave(sms, 0), total(sms, 0);
    for (int b = 0; b < blocks; ++b) {
      if (sm[b] >= static_cast<unsigned>(sms)) continue;  // never: %smid < the SM count
      ++total[sm[b]];
      if (start[b] - first < kFirstWaveNs) ++wave[sm[b]];
    }
    std::vector<int> holding(occupancy + 2, 0);  // SMs holding 0..occupancy (+1: more)
    for (int s = 0; s < sms; ++s) ++holding[std::min(wave[s], occupancy + 1)];
    std::printf("blocks %6d (%.2f per SM): first wave, SMs holding 0..%d:", blocks,
                static_cast<double>(blocks) / sms, occupancy);
    for (int c = 0; c <= occupancy; ++c) std::printf(" %d", holding[c]);
    // More than the occupancy in the first wave: blocks of two waves fell inside kFirstWaveNs.
    if (holding[occupancy + 1] > 0) std::printf(", more: %d", holding[occupancy + 1]);
    std::printf(" | blocks per SM in all: fewest %d, most %d\n",
                *std::min_element(total.begin(), total.end()),
                *std::max_element(total.begin(), total.end()));
  }
  CHECK(cudaFree(sm_of));
  CHECK(cudaFree(start_of));
  return 0;
}
