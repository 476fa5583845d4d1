// SPDX-License-Identifier: MIT
#include "common/roofline.h"

namespace sgemm {

int fp32_lanes_per_sm(int major, int minor) {
  // CUDA C++ Programming Guide, "Arithmetic Instructions", row "32-bit floating-point add,
  // multiply, multiply-add": results per clock cycle per multiprocessor.
  switch (major) {
    case 5:
      return 128;  // Maxwell
    case 6:
      return minor == 0 ? 64 : 128;  // P100 (6.0) has 64
    case 7:
      return 64;  // Volta, Turing
    case 8:
      return minor == 0 ? 64 : 128;  // A100 (8.0) 64; sm_86/87/89 128
    case 9:
      return 128;  // Hopper
    case 10:
    case 11:
    case 12:
      return 128;  // Blackwell
    default:
      return 0;
  }
}

double fp32_peak_flops(int sms, int lanes_per_sm, double sm_clock_hz) {
  return static_cast<double>(sms) * lanes_per_sm * 2.0 * sm_clock_hz;
}

double dram_bandwidth_bytes(double mem_clock_hz, int bus_width_bits) {
  return 2.0 * mem_clock_hz * (bus_width_bits / 8.0);
}

double ridge_point(double peak_flops, double bandwidth_bytes) {
  return peak_flops / bandwidth_bytes;
}

double gemm_flops(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

double ideal_bytes(int64_t m, int64_t n, int64_t k) {
  const double dm = m, dn = n, dk = k;
  return 4.0 * (dm * dk + dk * dn + 2.0 * dm * dn);
}

double tiled_bytes(int64_t m, int64_t n, int64_t k, int tile_m, int tile_n) {
  const double row_tiles = static_cast<double>((m + tile_m - 1) / tile_m);
  const double col_tiles = static_cast<double>((n + tile_n - 1) / tile_n);
  const double dm = m, dn = n, dk = k;
  return 4.0 * (dm * dk * col_tiles + dk * dn * row_tiles + 2.0 * dm * dn);
}

const char* bound(double ratio_flop_per_byte, double ridge_flop_per_byte) {
  return ratio_flop_per_byte < ridge_flop_per_byte ? "memory" : "compute";
}

}  // namespace sgemm
