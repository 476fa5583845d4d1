// SPDX-License-Identifier: MIT
// The roofline arithmetic: device peaks, the ideal GEMM compute-to-memory ratio, a chapter's ratio
// from its traffic model, and the bound they imply. Pure host code, unit tested against the
// figures of the source analysis (tests/host/roofline_test.cpp). docs/roofline.md explains it.
#pragma once

#include <cstdint>

namespace sgemm {

// FP32 FMA lanes per SM (results per clock of a 32-bit multiply-add) by compute capability, from
// the CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table. 0 when unknown.
int fp32_lanes_per_sm(int major, int minor);

// lanes * SMs * 2 FLOP per FMA * clock.
double fp32_peak_flops(int sms, int lanes_per_sm, double sm_clock_hz);

// Double data rate: two transfers per memory clock over the bus.
double dram_bandwidth_bytes(double mem_clock_hz, int bus_width_bits);

// FLOP per byte at which memory time and compute time are equal.
double ridge_point(double peak_flops, double bandwidth_bytes);

double gemm_flops(int64_t m, int64_t n, int64_t k);  // 2MNK: one multiply and one add per term

// Fewest bytes any GEMM must move: A and B read once, C read and written once (the source's
// convention; with beta = 0 the read of C is not needed, which the model ignores).
double ideal_bytes(int64_t m, int64_t n, int64_t k);

// Bytes moved by a kernel whose blocks each compute a tile_m x tile_n tile of C straight from
// global memory: A is read once per column of tiles, B once per row of tiles, C read and written.
// tile 1x1 is the naive kernel's 2MN(K+1) words.
double tiled_bytes(int64_t m, int64_t n, int64_t k, int tile_m, int tile_n);

inline double ratio(double flops, double bytes) { return flops / bytes; }

// "memory" when the ratio is below the ridge point (bandwidth limits), else "compute".
const char* bound(double ratio_flop_per_byte, double ridge_flop_per_byte);

}  // namespace sgemm
