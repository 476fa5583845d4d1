// SPDX-License-Identifier: MIT
// The one harness every chapter links. A chapter hands run_chapter() a Chapter: its name, its
// launcher and the C tile one thread block computes (its traffic model). The harness owns the whole
// sequence: options -> device -> buffers -> seeded fill -> cuBLAS reference -> NaN-poisoned C ->
// one run -> verify -> time chapter and cuBLAS alike -> report. See docs/methodology.md.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "common/exit_codes.h"

namespace sgemm {

struct DeviceInfo;  // common/device.h: what the harness read off the chosen GPU

// C = alpha * A * B + beta * C, all row-major and densely packed:
// A is m x k (leading dimension k), B is k x n (ld n), C is m x n (ld n).
// Kernels must be correct for every m, n, k >= 1. Products such as row * k can exceed 2^31,
// so form them in 64 bits (the harness accepts any shape that fits in device memory).
// When beta == 0, C must not be read: it holds NaN when the chapter runs (BLAS semantics).
struct Problem {
  int m = 0;
  int n = 0;
  int k = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
  // Scratch memory for the launcher (split-K partial sums, say): workspace_bytes(problem) bytes
  // of the Chapter, allocated by the harness once per shape, before the first run and outside
  // every timed region. Null when the chapter asks for none. Its contents are undefined at each
  // launch: a launcher must not rely on what an earlier launch left there.
  void* workspace = nullptr;
  size_t workspace_size = 0;
};

// The C tile one block computes (the traffic model's input).
struct TileSize {
  int m;
  int n;
};

// A precision contract: what a chapter promises about its arithmetic. It decides the
// verification tolerance and which cuBLAS mode the chapter is timed against (docs/methodology.md).
//   kFp32: every multiply-add in FP32 (compared with cuBLAS CUBLAS_COMPUTE_32F, TF32 off);
//   kTf32: inputs rounded to TF32 on the tensor cores (compared with CUBLAS_COMPUTE_32F_FAST_TF32).
enum class Precision { kFp32, kTf32 };

// Only computes the grid and launches on `stream`: no allocation, timing or synchronisation.
// The harness checks cudaGetLastError() after every call.
using Launcher = void (*)(const Problem& problem, const float* A, const float* B, float* C,
                          cudaStream_t stream);

struct Chapter {
  const char* name;   // folder name, e.g. "03_thread_tiling"
  const char* title;  // one line: the idea this chapter adds
  Launcher launch;
  // Traffic model: the C tile (tile_m x tile_n) one block computes from global memory. Every block
  // reads its tile_m x K strip of A and K x tile_n strip of B once, and C is read and written once,
  // so bytes = 4 * (M*K*ceil(N/tile_n) + K*N*ceil(M/tile_m) + 2*M*N). The naive kernel is tile 1x1.
  int tile_m;
  int tile_n;
  // Optional, for a launcher that picks its tile by shape (chapter 06 takes a smaller tile when
  // the large one would leave SMs idle): the tile it uses for this problem. Null: always
  // tile_m x tile_n.
  TileSize (*tile_for)(const Problem& problem) = nullptr;
  Precision precision = Precision::kFp32;
  // Optional: bytes of scratch the launcher needs for this problem (Problem::workspace).
  size_t (*workspace_bytes)(const Problem& problem) = nullptr;
  // Optional, for a chapter that runs only on some GPUs (the Hopper chapters: compute capability
  // 9.0 and code built for sm_90a, common/wgmma.h). Called with the chosen device, made current:
  // "" when the chapter can run there, else what it needs and what it found. The harness prints
  // that as one line, "error: <name> <reason>", and exits with code 3 before allocating anything.
  std::string (*unsupported)(const DeviceInfo& device) = nullptr;
};

// Runs the chapter as its main(); returns the process exit code (common/exit_codes.h).
int run_chapter(const Chapter& chapter, int argc, char** argv);

}  // namespace sgemm
