// SPDX-License-Identifier: MIT
#include "common/statistics.h"

#include <algorithm>

namespace sgemm {

double percentile(const std::vector<float>& sorted_ms, double q) {
  const double pos = q * static_cast<double>(sorted_ms.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted_ms.size() - 1);
  return sorted_ms[lo] + (pos - static_cast<double>(lo)) * (sorted_ms[hi] - sorted_ms[lo]);
}

Timing summarize(std::vector<float> ms) {
  Timing t;
  if (ms.empty()) return t;
  std::sort(ms.begin(), ms.end());
  t.samples = static_cast<int>(ms.size());
  t.median_ms = percentile(ms, 0.5);
  t.noise = t.median_ms > 0 ? (percentile(ms, 0.9) - percentile(ms, 0.1)) / t.median_ms : 0;
  return t;
}

}  // namespace sgemm
