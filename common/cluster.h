// SPDX-License-Identifier: MIT
// Thread block clusters, as chapter 13 teaches them (13_persistent_clusters/README.md): blocks
// launched together on neighbouring SMs of one GPC, which can read, write and arrive on each
// other's shared memory (distributed shared memory), and a TMA copy that lands in several of
// them at once (multicast). Chapters 13 on include this header; common/tma.h holds the copies and
// mbarriers of one block, which these extend to the cluster.
#pragma once

#include <cstdint>

#include "common/tma.h"

namespace sgemm {

// The configuration of cudaLaunchKernelEx for `blocks` blocks of `threads` in clusters of
// `cluster` blocks (a cluster launch has no <<< >>> form). `config.attrs` points into the object,
// so it is built in place and not copied.
struct ClusterLaunch {
  cudaLaunchAttribute attribute{};
  cudaLaunchConfig_t config{};

  ClusterLaunch(unsigned blocks, unsigned threads, size_t smem_bytes, unsigned cluster,
                cudaStream_t stream = nullptr) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = cluster;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = smem_bytes;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// This block's rank in its cluster: 0 .. cluster size - 1.
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t rank = 0;
#if SGEMM_SM90A_BUILT
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
#endif
  return rank;
}

// Every thread of every block of the cluster arrives, then waits for all the others: the cluster's
// __syncthreads. Release and acquire order each block's shared-memory writes (its mbarrier_init)
// before the other blocks' accesses after the barrier. Every thread of each block must take part,
// so no thread may leave the kernel before the last one.
__device__ __forceinline__ void cluster_sync() {
#if SGEMM_SM90A_BUILT
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
#endif
}

// One arrival on the mbarrier at the same shared-memory offset as `bar`, in the block of rank
// `rank` of this cluster (mapa turns the local address into that block's). The arrival keeps the
// default semantics (release at CTA scope), as chapter 12's local one: what it signals is that
// this warp's reads of a stage are over, and they are (its wgmma were waited for, its fragment
// loads sit in registers). Release at cluster scope would fence every arrival, and halved the
// kernel's speed on the H100 (13_persistent_clusters/README.md).
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, uint32_t rank) {
#if SGEMM_SM90A_BUILT
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_address(bar)),
      "r"(rank)
      : "memory");
#endif
}

// tma_load_2d into every block of the cluster whose rank has its bit set in `mask`: the box lands
// at the same shared-memory offset `dst` in each, and its bytes count on the mbarrier at the same
// offset as `bar` in each. L2 and the SMs' links carry the box once for all of them.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, int row,
                                                      int col, uint64_t* bar, uint16_t mask) {
#if SGEMM_SM90A_BUILT
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row), "r"(smem_address(bar)), "h"(mask)
      : "memory");
#endif
}

}  // namespace sgemm
