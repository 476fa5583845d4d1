// SPDX-License-Identifier: MIT
// The warp-wide tensor-core instructions chapter 08 teaches (08_tensor_cores/README.md, "The
// tensor-core instruction" and "ldmatrix"): mma.sync m16n8k8 in TF32 and the ldmatrix load that
// fills its A fragment. Chapters 09 on include them.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace sgemm {

// The tile of one mma.sync.aligned.m16n8k8 (TF32 in, FP32 out).
inline constexpr int kMmaM = 16;
inline constexpr int kMmaN = 8;
inline constexpr int kMmaK = 8;

// Four 8 x 4 tiles of 32-bit values from shared memory, one per register: lanes 8q .. 8q + 7
// give the row addresses of tile q, and lane l receives row l / 4, column l % 4 of each. For A
// the four tiles are (rows 0-7, k 0-3), (rows 8-15, k 0-3), (rows 0-7, k 4-7), (rows 8-15, k 4-7)
// of a 16 x 8 block: exactly the m16n8k8 fragment a0..a3, in one instruction instead of four.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}

// d += a * b on a 16 x 8 x 8 tile. Fragments (g = lane / 4, t = lane % 4; PTX ISA, "Matrix
// fragments for mma.m16n8k8", .tf32): a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4],
// a3 = A[g+8][t+4]; b0 = B[t][g], b1 = B[t+4][g]; d0 = C[g][2t], d1 = C[g][2t+1],
// d2 = C[g+8][2t], d3 = C[g+8][2t+1]. The operands are TF32 bit patterns (common/tf32.h).
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4],
                                         const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();  // TF32 tensor cores need sm_80 or newer
#endif
}

}  // namespace sgemm
