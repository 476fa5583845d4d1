// SPDX-License-Identifier: MIT
// Timing a kernel the same way as cuBLAS: CUDA events around each launch, warm-up first, the L2
// flushed before every sample, the two kernels alternated sample by sample.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>

#include "common/statistics.h"

namespace sgemm {

struct TimingPlan {
  int warmup = 3;
  int samples = 30;            // at most
  double time_budget_s = 2.0;  // fewer samples past this much kernel time (at least kMinSamples)
  void* flush = nullptr;       // a buffer twice the L2, rewritten before every sample
  size_t flush_bytes = 0;
};

inline constexpr int kMinSamples = 5;

struct TimingPair {
  Timing first;
  Timing second;  // empty when there is no second kernel
};

// Times run_first and (when given) run_second on `stream`. Each sample: flush the L2 (so small
// problems are timed from DRAM, not from the cache), then one launch between two events. The two
// alternate sample by sample, so clock and thermal drift affect both alike.
TimingPair time_alternating(cudaStream_t stream, const TimingPlan& plan,
                            const std::function<void()>& run_first,
                            const std::function<void()>& run_second);

}  // namespace sgemm
