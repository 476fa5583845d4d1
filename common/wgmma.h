// SPDX-License-Identifier: MIT
// Hopper's warpgroup MMA, as chapter 10 teaches it (10_wgmma/README.md): wgmma.mma_async in TF32
// with A from registers and B from 128-byte-swizzled shared memory, its descriptor, fence,
// commit and wait, the async-proxy fence, and the check that the GPU and the loaded code can run
// it. The Hopper chapters (10 on) include this header; each chapter is one translation unit, so
// the __device__ flag below is that chapter's own.
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "common/device.h"

// wgmma exists only in code compiled for sm_90a (the "a": features of this architecture only).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SGEMM_SM90A_BUILT 1
#else
#define SGEMM_SM90A_BUILT 0
#endif

namespace sgemm {

// 1 in the machine code the driver loaded for this GPU when that code was compiled for sm_90a, 0
// in code for any other architecture (where the Hopper kernels are stubs that trap).
__device__ int sm90a_built = SGEMM_SM90A_BUILT;

// The Chapter::unsupported check of a Hopper chapter: "" when the device is compute capability 9.0
// and the code loaded for it holds the sm_90a kernels; else what is needed and what was found, for
// the harness's one error line.
inline std::string sm90a_unsupported(const DeviceInfo& device) {
  const std::string found = "device " + std::to_string(device.index) + " is " + device.name +
                            ", compute capability " + std::to_string(device.cc_major) + "." +
                            std::to_string(device.cc_minor);
  if (device.cc_major != 9 || device.cc_minor != 0) {
    return "needs compute capability 9.0 (Hopper: wgmma, sm_90a); " + found;
  }
  int built = 0;
  if (cudaMemcpyFromSymbol(&built, sm90a_built, sizeof built) != cudaSuccess || built != 1) {
    (void)cudaGetLastError();  // a failed query only means: no sm_90a code
    return "needs code built for sm_90a (-gencode arch=compute_90a,code=sm_90a: CMake adds it "
           "where CMAKE_CUDA_ARCHITECTURES holds 90); " +
           found + " but this binary has none";
  }
  return "";
}

// A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format") for a K-major operand
// stored in rows of 128 bytes with the 128-byte swizzle: start address, leading-dimension offset
// (unused by a K-major swizzled operand; 1 by convention), stride between groups of 8 rows
// (8 x 128 bytes), and swizzle mode 1 = 128-byte swizzle. Moving along K inside the 128-byte row
// is adding bytes to the start address: the swizzle is applied to the final address bits, so the
// same descriptor serves every k-step.
__device__ __forceinline__ uint64_t smem_descriptor_sw128(uint32_t smem_addr) {
  return ((smem_addr & 0x3FFFF) >> 4) | (1ull << 16) | (uint64_t{1024 >> 4} << 32) | (1ull << 62);
}

// Generic-proxy writes to shared memory (st.shared, say after a rounding pass) become visible to
// the async proxy that wgmma and the copy engine read through.
__device__ __forceinline__ void fence_proxy_async() {
#if SGEMM_SM90A_BUILT
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// Orders this warpgroup's register writes (fragments, accumulators) before the next wgmma.
__device__ __forceinline__ void wgmma_fence() {
#if SGEMM_SM90A_BUILT
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

// Closes the group of wgmma this warpgroup issued since the last commit.
__device__ __forceinline__ void wgmma_commit() {
#if SGEMM_SM90A_BUILT
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

// Waits until at most kPending committed groups of wgmma are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
#if SGEMM_SM90A_BUILT
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
#endif
}

// Keeps the compiler from moving the computation of registers a wgmma reads (fragments,
// accumulators) across a wgmma fence or wait: ptxas would otherwise serialize the wgmma (C7513).
template <int N>
__device__ __forceinline__ void pin(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ __forceinline__ void pin(uint32_t (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// Sets this warpgroup's registers per thread to kCount (a multiple of 8, 24..256): dec hands
// registers back to the SM, inc takes them (waiting until others have handed enough back).
// Chapter 12 moves registers from the warpgroup that only issues copies to those that multiply.
// It takes effect only in a kernel with a register cap at entry (__launch_bounds__(threads, 1)).
template <int kCount>
__device__ __forceinline__ void setmaxnreg_dec() {
#if SGEMM_SM90A_BUILT
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kCount));
#endif
}
template <int kCount>
__device__ __forceinline__ void setmaxnreg_inc() {
#if SGEMM_SM90A_BUILT
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kCount));
#endif
}

// The 64 accumulator operands of an m64n128 wgmma: the preprocessor is the only way to write
// them once for the two forms below.
#define SGEMM_WGMMA_D64(d)                                                                        \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),    \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),  \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),  \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),  \
      "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),  \
      "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),  \
      "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),  \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define SGEMM_WGMMA_D64_LIST                                                                    \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "  \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "  \
  "%56, %57, %58, %59, %60, %61, %62, %63}"

// d (64 x 128, FP32) += a (64 x 8, TF32, registers) * b (8 x 128, TF32, shared memory through the
// descriptor b). The register operand a of lane (g, t) in warp w of the warpgroup: a[0] = row
// 16w + g, k t; a[1] = row 16w + g + 8, k t; a[2], a[3] the same at k t + 4 (mma.sync's A
// fragment). d[4j + e] of lane (g, t) in warp w: row 16w + g + 8 (e / 2), column 8j + 2t + e % 2.
// The three 1s: add to d (scale-d), and take A and B as they are (no negation).
__device__ __forceinline__ void wgmma_m64n128k8_tf32(float (&d)[64], const uint32_t (&a)[4],
                                                     uint64_t b) {
#if SGEMM_SM90A_BUILT
  asm volatile("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " SGEMM_WGMMA_D64_LIST
               ", {%64, %65, %66, %67}, %68, 1, 1, 1;\n"
               : SGEMM_WGMMA_D64(d)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
#else
  __trap();
#endif
}

// The same with scale-d as a run-time predicate: d = a * b + (add ? d : 0). add == false starts
// the accumulators afresh, without a pass that zeroes 64 registers.
__device__ __forceinline__ void wgmma_m64n128k8_tf32(float (&d)[64], const uint32_t (&a)[4],
                                                     uint64_t b, bool add) {
#if SGEMM_SM90A_BUILT
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " SGEMM_WGMMA_D64_LIST
      ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : SGEMM_WGMMA_D64(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(static_cast<int>(add)));
#else
  __trap();
#endif
}

// The same for 64 rows of C (wgmma's N = 64, 32 accumulators): d[4j + e] as above, j < 8. Chapter
// 14's tile for C with few rows (a decode step's M = 1..64) multiplies half as many rows of zeros.
#define SGEMM_WGMMA_D32(d)                                                                        \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
      "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),    \
      "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),  \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),  \
      "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define SGEMM_WGMMA_D32_LIST                                                                    \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"

__device__ __forceinline__ void wgmma_m64n64k8_tf32(float (&d)[32], const uint32_t (&a)[4],
                                                    uint64_t b, bool add = true) {
#if SGEMM_SM90A_BUILT
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " SGEMM_WGMMA_D32_LIST
      ", {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
      : SGEMM_WGMMA_D32(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(static_cast<int>(add)));
#else
  __trap();
#endif
}

// d (64 x kN) += a * b for the two widths above: a kernel generic over its tile's rows calls this.
template <int kN>
__device__ __forceinline__ void wgmma_tf32(float (&d)[kN / 2], const uint32_t (&a)[4], uint64_t b,
                                           bool add = true) {
  static_assert(kN == 64 || kN == 128, "wgmma_tf32: N is 64 or 128");
  if constexpr (kN == 128) {
    wgmma_m64n128k8_tf32(d, a, b, add);
  } else {
    wgmma_m64n64k8_tf32(d, a, b, add);
  }
}

#undef SGEMM_WGMMA_D64
#undef SGEMM_WGMMA_D64_LIST
#undef SGEMM_WGMMA_D32
#undef SGEMM_WGMMA_D32_LIST

}  // namespace sgemm
