// SPDX-License-Identifier: MIT
// Not a chapter: CUTLASS 2.x's sm80 TF32 GEMMs (examples/14 and 27) behind this repository's
// harness, so that their speed is a ratio to cuBLAS timed in the same process and their error is
// measured against FP64 exactly as chapters 08's and 09's are (cutlass_comparison_b29992a.txt
// beside this file says how it was built and run). CUTLASS is not a dependency of the repository:
// build this file by hand against a CUTLASS checkout and the harness libraries of a build tree.
//   CUTLASS_FAST_F32 1: OpMultiplyAddFastF32 (3xTF32, examples/27), precision kFp32
//                    0: OpMultiplyAdd on float inputs (1xTF32, examples/14), precision kTf32
//   CUTLASS_B_COL    0: B row-major, as the harness gives it
//                    1: B column-major, transposed into the workspace at every launch
//                    2: B column-major, transposed once per (B, workspace, k, n) and reused
//   CUTLASS_TILE     BM, BN, BK, WM, WN, WK, STAGES
#include <string>

#include "common/check.h"
#include "common/harness.h"
#include "cutlass/cutlass.h"
#include "cutlass/gemm/device/gemm.h"

#ifndef CUTLASS_FAST_F32
#define CUTLASS_FAST_F32 1
#endif
#ifndef CUTLASS_B_COL
#define CUTLASS_B_COL 0
#endif
#ifndef CUTLASS_TILE
#if CUTLASS_FAST_F32
#define CUTLASS_TILE 128, 64, 16, 64, 32, 16, 3  // examples/27
#else
#define CUTLASS_TILE 128, 128, 16, 64, 64, 16, 4  // examples/14
#endif
#endif

namespace {
struct T7 { int bm, bn, bk, wm, wn, wk, st; };
constexpr T7 kT{CUTLASS_TILE};
using LayoutB = typename std::conditional<CUTLASS_B_COL == 0, cutlass::layout::RowMajor,
                                          cutlass::layout::ColumnMajor>::type;
using Op = typename std::conditional<CUTLASS_FAST_F32 == 1, cutlass::arch::OpMultiplyAddFastF32,
                                     cutlass::arch::OpMultiplyAdd>::type;
using Gemm = cutlass::gemm::device::Gemm<
    float, cutlass::layout::RowMajor, float, LayoutB, float, cutlass::layout::RowMajor, float,
    cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<kT.bm, kT.bn, kT.bk>, cutlass::gemm::GemmShape<kT.wm, kT.wn, kT.wk>,
    cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, kT.st, 4, 4, false, Op>;

// dst (cols x rows) = src (rows x cols)^T through a padded 32 x 32 shared tile: B row-major into
// the column-major B of CUTLASS_B_COL. Outside the GEMM's own code; CUTLASS_B_COL = 2 runs it once.
__global__ void transpose(int rows, int cols, const float* __restrict__ src,
                          float* __restrict__ dst) {
  __shared__ float tile[32][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  for (int r = blockIdx.y * 32 + threadIdx.y; r < blockIdx.y * 32 + 32; r += 8)
    if (r < rows && c < cols) tile[r - blockIdx.y * 32][threadIdx.x] = src[(size_t)r * cols + c];
  __syncthreads();
  const int r2 = blockIdx.y * 32 + threadIdx.x;
  for (int c2 = blockIdx.x * 32 + threadIdx.y; c2 < blockIdx.x * 32 + 32; c2 += 8)
    if (c2 < cols && r2 < rows)
      dst[(size_t)c2 * rows + r2] = tile[threadIdx.x][c2 - blockIdx.x * 32];
}

// Which B the column-major copy in the workspace holds, so that CUTLASS_B_COL = 2 transposes once
// per shape (the harness fills B once per shape and keeps it through the timed launches).
struct TransposedB {
  const float* b = nullptr;
  const void* workspace = nullptr;
  int k = -1, n = -1;
  bool holds(const sgemm::Problem& p, const float* B) const {
    return b == B && workspace == p.workspace && k == p.k && n == p.n;
  }
};

void launch(const sgemm::Problem& p, const float* A, const float* B, float* C, cudaStream_t s) {
  // Alignment 4 (16-byte accesses) for A, B and C, as in examples/14 and 27. The harness turns
  // the exception into one line on stderr and exit code 2.
  if (p.k % 4 != 0 || p.n % 4 != 0) {
    throw sgemm::UsageError("cutlass_ref needs K % 4 == 0 and N % 4 == 0");
  }
  const float* b = B;
  int ldb = p.n;
  if (CUTLASS_B_COL) {
    static TransposedB held;
    float* bt = static_cast<float*>(p.workspace);
    if (CUTLASS_B_COL == 1 || !held.holds(p, B)) {
      transpose<<<dim3((p.n + 31) / 32, (p.k + 31) / 32), dim3(32, 8), 0, s>>>(p.k, p.n, B, bt);
      held = {B, p.workspace, p.k, p.n};
    }
    b = bt;
    ldb = p.k;
  }
  // Built per launch: a host-side object of a few hundred bytes, negligible beside the GEMM.
  typename Gemm::Arguments args({p.m, p.n, p.k}, {A, p.k}, {b, ldb}, {C, p.n}, {C, p.n},
                                {p.alpha, p.beta});
  Gemm gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess ||
      gemm.initialize(args, nullptr, s) != cutlass::Status::kSuccess) {
    throw sgemm::RuntimeFailure("CUTLASS cannot run this shape");
  }
  gemm.run(s);
}

size_t workspace(const sgemm::Problem& p) {
  return CUTLASS_B_COL ? static_cast<size_t>(p.k) * p.n * sizeof(float) : 0;
}
}  // namespace

int main(int argc, char** argv) {
  static const std::string title =
      std::string("CUTLASS ") + (CUTLASS_FAST_F32 ? "3xTF32" : "1xTF32") + " B " +
      (CUTLASS_B_COL ? "col" : "row") + " tile " + std::to_string(kT.bm) + "x" +
      std::to_string(kT.bn) + "x" + std::to_string(kT.bk) + " warp " + std::to_string(kT.wm) +
      "x" + std::to_string(kT.wn) + " stages " + std::to_string(kT.st);
  sgemm::Chapter ch{"cutlass_ref", title.c_str(), &launch, kT.bm, kT.bn};
  ch.precision = CUTLASS_FAST_F32 ? sgemm::Precision::kFp32 : sgemm::Precision::kTf32;
  ch.workspace_bytes = &workspace;
  return sgemm::run_chapter(ch, argc, argv);
}
