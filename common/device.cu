// SPDX-License-Identifier: MIT
#include "common/device.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <string>

#include "common/check.h"
#include "common/roofline.h"

namespace sgemm {
namespace {

std::string version_string(int encoded) {  // 13000 -> "13.0"
  return std::to_string(encoded / 1000) + "." + std::to_string((encoded % 1000) / 10);
}

// cudaGetDeviceCount reports "CUDA driver version is insufficient" both when the driver is too
// old and when there is no driver at all (a machine without a GPU), which reads as "upgrade your
// driver" to someone who simply has no GPU. Ask the driver library itself which case it is.
std::string no_gpu_reason(cudaError_t status) {
  if (status == cudaSuccess || status == cudaErrorNoDevice) {
    return "the NVIDIA driver is installed but sees no CUDA device";
  }
  if (status == cudaErrorInsufficientDriver) {
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver == nullptr) return "no NVIDIA driver is installed (libcuda.so.1 not found)";
    using GetVersion = int (*)(int*);
    const auto get_version = reinterpret_cast<GetVersion>(dlsym(driver, "cuDriverGetVersion"));
    int supported = 0, runtime = 0;
    const bool known = get_version != nullptr && get_version(&supported) == 0;
    dlclose(driver);
    cudaRuntimeGetVersion(&runtime);
    if (known) {
      return "the NVIDIA driver supports CUDA " + version_string(supported) +
             ", older than this build's CUDA runtime " + version_string(runtime) +
             ": update the driver";
    }
    return "the NVIDIA driver library is present but does not answer (" +
           std::string(cudaGetErrorString(status)) + ")";
  }
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

}  // namespace

int select_device(int requested) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear the sticky error of the failed query
    throw RuntimeFailure("no CUDA GPU found: " + no_gpu_reason(status) +
                         "; the chapters need one, the host tests do not");
  }
  if (requested >= count) {
    throw UsageError("--device " + std::to_string(requested) +
                     " does not exist: " + std::to_string(count) + " CUDA device(s), indices 0.." +
                     std::to_string(count - 1));
  }
  CUDA_CHECK(cudaSetDevice(requested));
  return requested;
}

DeviceInfo query_device(int index) {
  DeviceInfo d;
  d.index = index;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sms = prop.multiProcessorCount;
  d.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  // The clock fields of cudaDeviceProp are gone in CUDA 13: the attributes remain (kHz).
  int sm_khz = 0, mem_khz = 0, bus_bits = 0, l2 = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, index));
  d.sm_clock_mhz = sm_khz / 1000.0;
  d.mem_clock_mhz = mem_khz / 1000.0;
  d.bus_width_bits = bus_bits;
  d.l2_bytes = l2;
  d.fp32_lanes_per_sm = fp32_lanes_per_sm(d.cc_major, d.cc_minor);
  const double peak = fp32_peak_flops(d.sms, d.fp32_lanes_per_sm, sm_khz * 1e3);
  const double bandwidth = dram_bandwidth_bytes(mem_khz * 1e3, bus_bits);
  d.fp32_peak_tflops = peak / 1e12;
  d.dram_bandwidth_gbs = bandwidth / 1e9;
  d.ridge = bandwidth > 0 ? ridge_point(peak, bandwidth) : 0.0;
  int driver = 0, runtime = 0, cublas = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  d.driver = version_string(driver);
  d.runtime = version_string(runtime);
  CUBLAS_CHECK(cublasGetVersion(nullptr, &cublas));  // legacy form: handle may be null
  d.cublas = std::to_string(cublas / 10000) + "." + std::to_string((cublas / 100) % 100) + "." +
             std::to_string(cublas % 100);
  return d;
}

const DeviceInfo& current_device() {
  static const DeviceInfo d = [] {
    int index = 0;
    CUDA_CHECK(cudaGetDevice(&index));
    return query_device(index);
  }();
  return d;
}

}  // namespace sgemm
