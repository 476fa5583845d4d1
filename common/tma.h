// SPDX-License-Identifier: MIT
// The Tensor Memory Accelerator (TMA) and mbarriers, as chapter 11 teaches them (11_tma/README.md):
// a tensor map built on the host, the bulk tensor copy one thread issues, and the shared-memory
// barrier that counts the bytes it delivers. Chapters 11 on include this header.
//
// The tensor map is encoded by the driver (cuTensorMapEncodeTiled). The chapters link only the CUDA
// runtime, so they reach that driver function through cudaGetDriverEntryPointByVersion: a machine
// without a driver still runs the harness far enough to print its one-line "no CUDA GPU" error.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <cuda.h>  // CUtensorMap and its enums: types only, no driver library is linked
#include <cuda_runtime.h>

#include "common/exit_codes.h"
#include "common/tf32.h"
#include "common/wgmma.h"  // SGEMM_SM90A_BUILT: the Hopper chapters' code exists only for sm_90a

namespace sgemm {

// ---- Host: the tensor map ----------------------------------------------------------------------

// cuTensorMapEncodeTiled, reached through the runtime (see above).
using TensorMapEncode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                     const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                     const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
inline TensorMapEncode tensor_map_encoder() {
  static const TensorMapEncode encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      std::fprintf(stderr, "error: the driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12)\n");
      std::exit(kExitRuntime);
    }
    return reinterpret_cast<TensorMapEncode>(fn);
  }();
  return encode;
}

// A tensor map of a row-major matrix of floats (rows x cols, rows `row_stride` floats apart) whose
// copies bring box_rows x box_cols tiles into shared memory, each box row of 128 bytes stored with
// the 128-byte swizzle (chunk c of 16 bytes in row r lands at chunk c ^ (r % 8)). Elements outside
// the matrix arrive as zeros. TMA's limits, checked by the driver: the base 16-byte aligned, the
// row stride a multiple of 16 bytes, box_cols * 4 <= 128 (the swizzle span), box dimensions <= 256.
// A failure is a bug in the caller, not bad input: one error line, exit code 3.
inline CUtensorMap tensor_map_2d(const float* base, uint64_t rows, uint64_t cols,
                                 uint64_t row_stride, uint32_t box_rows, uint32_t box_cols,
                                 CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {cols, rows};                     // innermost first
  const cuuint64_t strides[1] = {row_stride * sizeof(float)};  // bytes, dimension 1 only
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = tensor_map_encoder()(
      &map, type, 2, const_cast<float*>(base), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr,
                 "error: cuTensorMapEncodeTiled failed (CUresult %d) for a %llu x %llu matrix, "
                 "row stride %llu floats, box %u x %u\n",
                 static_cast<int>(r), static_cast<unsigned long long>(rows),
                 static_cast<unsigned long long>(cols), static_cast<unsigned long long>(row_stride),
                 box_rows, box_cols);
    std::exit(kExitRuntime);
  }
  return map;
}

// A tensor map of `slices` dense row-major rows x cols matrices of floats, slice_stride floats
// apart (C, or chapter 13's split-K slices of it), for stores: a TMA store writes a box_rows x
// box_cols box from shared memory (stored with the 128-byte swizzle, as above) and leaves out the
// elements that fall outside the matrix. Limits as tensor_map_2d's: cols and slice_stride multiples
// of 4, the base 16-byte aligned.
inline CUtensorMap tensor_map_slices(float* base, uint64_t slices, uint64_t rows, uint64_t cols,
                                     uint64_t slice_stride, uint32_t box_rows, uint32_t box_cols) {
  CUtensorMap map;
  const cuuint64_t dims[3] = {cols, rows, slices};
  const cuuint64_t strides[2] = {cols * sizeof(float), slice_stride * sizeof(float)};
  const cuuint32_t box[3] = {box_cols, box_rows, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r = tensor_map_encoder()(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, base, dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(
        stderr,
        "error: cuTensorMapEncodeTiled failed (CUresult %d) for %llu slices of %llu x %llu, "
        "slice stride %llu floats, box %u x %u\n",
        static_cast<int>(r), static_cast<unsigned long long>(slices),
        static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols),
        static_cast<unsigned long long>(slice_stride), box_rows, box_cols);
    std::exit(kExitRuntime);
  }
  return map;
}

// ---- Host: matrices as TMA reads them --------------------------------------------------------
// TMA steps from row to row by a stride that must be a multiple of 16 bytes, and it copies bytes
// as they are: it cannot round to TF32. A launcher whose matrix has rows that are not 16-byte
// aligned (cols % 4 != 0), or that wants it rounded before the GEMM (chapter 11's A), first copies
// it into its workspace, rows padded to a multiple of 4 floats; the tensor map still says the true
// width, so the padding is never read (the copy engine fills columns past it with zeros).

// Floats from one row to the next in the matrix TMA reads.
__host__ __device__ inline int64_t tma_row_stride(int64_t cols) { return (cols + 3) / 4 * 4; }

// Workspace bytes for the copy of a rows x cols matrix: 0 when TMA reads the matrix itself; else
// rounded up to 256 bytes, so that a second copy after it starts aligned.
inline size_t tma_copy_bytes(int64_t rows, int64_t cols, bool round_tf32) {
  if (cols % 4 == 0 && !round_tf32) return 0;
  return (static_cast<size_t>(rows * tma_row_stride(cols)) * sizeof(float) + 255) / 256 * 256;
}

// dst (rows x cols, rows tma_row_stride(cols) floats apart) = src (dense), each element rounded
// to TF32 when kRound (sgemm::tf32_value: the nearest TF32 value, never Inf). One pass, 16-byte
// accesses where the rows allow them; the padding is left as it is.
template <bool kRound>
__global__ void copy_to_tma_rows(const float* __restrict__ src, float* __restrict__ dst,
                                 int64_t rows, int64_t cols) {
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  auto convert = [](float x) { return kRound ? tf32_value(x) : x; };
  if (cols % 4 == 0) {  // same layout on both sides
    const int64_t total = rows * cols / 4;
    for (int64_t i = first; i < total; i += step) {
      float4 v = reinterpret_cast<const float4*>(src)[i];
      v = make_float4(convert(v.x), convert(v.y), convert(v.z), convert(v.w));
      reinterpret_cast<float4*>(dst)[i] = v;
    }
    return;
  }
  const int64_t stride = tma_row_stride(cols);
  const int64_t total = rows * cols;
  for (int64_t i = first; i < total; i += step) {
    dst[(i / cols) * stride + i % cols] = convert(src[i]);
  }
}

// The matrix as TMA can read it (rounded to TF32 if asked): src itself, or its copy at *workspace
// (which then moves past it), issued on `stream` before the GEMM that reads it.
inline const float* tma_readable(const float* src, int64_t rows, int64_t cols, bool round_tf32,
                                 char** workspace, cudaStream_t stream) {
  if (tma_copy_bytes(rows, cols, round_tf32) == 0) return src;
  float* dst = reinterpret_cast<float*>(*workspace);
  *workspace += tma_copy_bytes(rows, cols, round_tf32);
  // Enough blocks to fill every SM a few times; the loop covers the rest.
  if (round_tf32) {
    copy_to_tma_rows<true><<<1056, 256, 0, stream>>>(src, dst, rows, cols);
  } else {
    copy_to_tma_rows<false><<<1056, 256, 0, stream>>>(src, dst, rows, cols);
  }
  return dst;
}

// ---- Device: mbarriers ------------------------------------------------------------------------
// An mbarrier is 8 bytes of shared memory that counts arrivals and, for TMA, bytes. It completes a
// phase when the expected arrivals have arrived and the expected bytes have landed; then it starts
// the next phase, and the phase's parity (0, 1, 0, ...) is what a waiting thread compares against.

__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Expects `arrivals` arrivals per phase.
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrivals) {
#if SGEMM_SM90A_BUILT
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(arrivals)
               : "memory");
#endif
}

// Makes initialized mbarriers visible to the copy engine (the async proxy) before any copy names
// them; a __syncthreads after it makes them visible to the other threads.
__device__ __forceinline__ void fence_mbarrier_init() {
#if SGEMM_SM90A_BUILT
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

// One arrival, and `bytes` more to land before this phase completes (the copies issued next).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
#if SGEMM_SM90A_BUILT
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)),
               "r"(bytes)
               : "memory");
#endif
}

// One arrival (a consumer handing a stage back, chapter 12).
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
#if SGEMM_SM90A_BUILT
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
#endif
}

// Waits until the phase with this parity has completed. try_wait suspends the thread for a while
// in hardware before it reports false, so the loop does not hammer shared memory.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
#if SGEMM_SM90A_BUILT
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(smem_address(bar)),
      "r"(parity)
      : "memory");
#endif
}

// ---- Device: the bulk tensor copy --------------------------------------------------------------

// Copies the box at (row, col) of the tensor map into shared memory at dst (1024-byte aligned for
// the 128-byte swizzle), counting its bytes on bar. The whole box's bytes count, including the
// zeros that stand for elements outside the matrix. `map` must live in parameter, constant or
// global memory: a __grid_constant__ kernel parameter.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int row, int col,
                                            uint64_t* bar) {
#if SGEMM_SM90A_BUILT
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row), "r"(smem_address(bar))
      : "memory");
#endif
}

// ---- Device: the bulk tensor store (chapter 13's epilogue) ----------------------------------
// Where `issue` holds, copies a box from shared memory at src (1024-byte aligned, 128-byte
// swizzle) to (slice, row, col) of a tensor_map_slices map; every thread of a warp may call it, and
// one issues the store (the predicate sits in the instruction). The threads that wrote src must
// make their writes visible to the copy engine first (fence_proxy_async, then a barrier). The
// store joins the issuing thread's open bulk group; bulk_commit closes it, and only that thread
// can wait for it.
__device__ __forceinline__ void tma_store_3d(bool issue, const CUtensorMap* map, const void* src,
                                             int slice, int row, int col) {
#if SGEMM_SM90A_BUILT
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.u32 p, %5, 0;\n"
      "@p cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n}\n" ::
          "l"(reinterpret_cast<uint64_t>(map)),
      "r"(col), "r"(row), "r"(slice), "r"(smem_address(src)), "r"(static_cast<uint32_t>(issue))
      : "memory");
#endif
}

__device__ __forceinline__ void bulk_commit() {
#if SGEMM_SM90A_BUILT
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most kPending of this thread's committed bulk groups still read shared memory
// (their sources may then be written again). A thread with none returns at once.
template <int kPending>
__device__ __forceinline__ void bulk_wait_read() {
#if SGEMM_SM90A_BUILT
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
#endif
}

// Waits until at most kPending of this thread's committed bulk groups are unfinished (their writes
// to global memory done).
template <int kPending>
__device__ __forceinline__ void bulk_wait() {
#if SGEMM_SM90A_BUILT
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

}  // namespace sgemm
