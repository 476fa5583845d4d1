// SPDX-License-Identifier: MIT
// Summaries of timing samples: the median and the noise. Host-only, unit tested.
#pragma once

#include <vector>

namespace sgemm {

struct Timing {
  double median_ms = 0;
  double noise = 0;  // (p90 - p10) / median
  int samples = 0;
};

// Linear interpolation between the two nearest ranks of a sorted, non-empty sample; q in [0, 1].
double percentile(const std::vector<float>& sorted_ms, double q);

Timing summarize(std::vector<float> ms);

}  // namespace sgemm
