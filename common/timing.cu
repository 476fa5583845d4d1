// SPDX-License-Identifier: MIT
#include "common/timing.h"

#include <algorithm>
#include <vector>

#include "common/check.h"
#include "common/resources.h"

namespace sgemm {

TimingPair time_alternating(cudaStream_t stream, const TimingPlan& plan,
                            const std::function<void()>& run_first,
                            const std::function<void()>& run_second) {
  NvtxRange range("timing");
  const int kinds = run_second ? 2 : 1;
  auto run = [&](int kind) { kind == 0 ? run_first() : run_second(); };

  for (int i = 0; i < plan.warmup; ++i) {
    for (int kind = 0; kind < kinds; ++kind) run(kind);
  }
  // One timed probe of each sizes the sample count to the time budget.
  Event probe_start, probe_stop;
  CUDA_CHECK(cudaEventRecord(probe_start.get(), stream));
  for (int kind = 0; kind < kinds; ++kind) run(kind);
  CUDA_CHECK(cudaEventRecord(probe_stop.get(), stream));
  CUDA_CHECK(cudaEventSynchronize(probe_stop.get()));
  float probe_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&probe_ms, probe_start.get(), probe_stop.get()));
  const int affordable = static_cast<int>(plan.time_budget_s * 1e3 / std::max(probe_ms, 1e-3f));
  const int samples = std::min(plan.samples, std::max(kMinSamples, affordable));

  std::vector<Event> events;
  events.reserve(static_cast<size_t>(samples) * kinds * 2);
  for (int i = 0; i < samples * kinds * 2; ++i) events.emplace_back();
  for (int s = 0; s < samples; ++s) {
    for (int kind = 0; kind < kinds; ++kind) {
      if (plan.flush_bytes > 0) {
        CUDA_CHECK(cudaMemsetAsync(plan.flush, s & 0xFF, plan.flush_bytes, stream));
      }
      const size_t e = (static_cast<size_t>(s) * kinds + kind) * 2;
      CUDA_CHECK(cudaEventRecord(events[e].get(), stream));
      run(kind);
      CUDA_CHECK(cudaEventRecord(events[e + 1].get(), stream));
    }
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> ms[2];
  for (int s = 0; s < samples; ++s) {
    for (int kind = 0; kind < kinds; ++kind) {
      const size_t e = (static_cast<size_t>(s) * kinds + kind) * 2;
      float elapsed = 0;
      CUDA_CHECK(cudaEventElapsedTime(&elapsed, events[e].get(), events[e + 1].get()));
      ms[kind].push_back(elapsed);
    }
  }
  return {summarize(ms[0]), kinds == 2 ? summarize(ms[1]) : Timing{}};
}

}  // namespace sgemm
