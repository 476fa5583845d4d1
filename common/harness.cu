// SPDX-License-Identifier: MIT
// The harness sequence, written once: options -> device -> buffers -> seeded fill -> reference ->
// poisoned C -> one run -> verify -> timing (chapter and cuBLAS alike) -> report.
#include "common/harness.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/fill.h"
#include "common/options.h"
#include "common/report.h"
#include "common/roofline.h"
#include "common/verify.h"

namespace sgemm {

void check_cuda(cudaError_t status, const char* expr, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw RuntimeFailure(std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status) +
                       " (" + expr + " at " + file + ":" + std::to_string(line) + ")");
}

void check_cublas(cublasStatus_t status, const char* expr, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw RuntimeFailure(std::string(cublasGetStatusName(status)) + ": " +
                       cublasGetStatusString(status) + " (" + expr + " at " + file + ":" +
                       std::to_string(line) + ")");
}

namespace {

constexpr char kReferenceCublas[] = "cuBLAS FP32 (cublasGemmEx, CUBLAS_COMPUTE_32F, TF32 off)";
constexpr char kReferenceCpu[] = "CPU, double accumulation";
constexpr int kMinSamples = 5;

// Names the phases on an Nsight Systems timeline.
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t count) : count_(count) {
    CUDA_CHECK(cudaMalloc(&ptr_, std::max<size_t>(count, 1) * sizeof(T)));
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return ptr_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_;
};

class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

__global__ void fill_uniform(float* data, int64_t count, uint64_t seed, uint64_t stream) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    data[i] = uniform_pm1(seed, stream, static_cast<uint64_t>(i));
  }
}

void fill(float* data, int64_t count, uint64_t seed, uint64_t stream, cudaStream_t s) {
  fill_uniform<<<1024, 256, 0, s>>>(data, count, seed, stream);
  CUDA_CHECK(cudaGetLastError());
}

std::string version_string(int encoded) {  // 13000 -> "13.0"
  return std::to_string(encoded / 1000) + "." + std::to_string((encoded % 1000) / 10);
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

// Picks the device; a missing GPU is a runtime failure (3), a bad index a usage error (2).
int select_device(int requested) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    throw RuntimeFailure(std::string("no CUDA GPU found (cudaGetDeviceCount: ") +
                         (status == cudaSuccess ? "0 devices" : cudaGetErrorString(status)) +
                         "); the chapters need one, the host tests do not");
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

// Row-major C = alpha*A*B + beta*C through column-major cuBLAS: a row-major matrix is the
// column-major view of its transpose, so compute C^T = B^T * A^T, i.e. swap the operands and
// m with n; no data moves. CUBLAS_COMPUTE_32F keeps every multiply-add in FP32 (no TF32).
void cublas_gemm(cublasHandle_t handle, const Problem& p, const float* A, const float* B,
                 float* C) {
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &p.alpha, B,
                            CUDA_R_32F, p.n, A, CUDA_R_32F, p.k, &p.beta, C, CUDA_R_32F, p.n,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

struct Timing {
  double median_ms = 0;
  double noise = 0;  // (p90 - p10) / median
  int samples = 0;
};

// Linear interpolation between the two nearest ranks of a sorted sample.
double percentile(const std::vector<float>& sorted_ms, double q) {
  const double pos = q * (sorted_ms.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted_ms.size() - 1);
  return sorted_ms[lo] + (pos - lo) * (sorted_ms[hi] - sorted_ms[lo]);
}

Timing summarize(std::vector<float> ms) {
  std::sort(ms.begin(), ms.end());
  Timing t;
  t.samples = static_cast<int>(ms.size());
  t.median_ms = percentile(ms, 0.5);
  t.noise = t.median_ms > 0 ? (percentile(ms, 0.9) - percentile(ms, 0.1)) / t.median_ms : 0;
  return t;
}

class Session {
 public:
  Session(const Chapter& chapter, const Options& options) : chapter_(chapter), options_(options) {
    device_ = query_device(select_device(options.device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&cublas_));
    CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
    CUBLAS_CHECK(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
  }
  ~Session() {
    if (cublas_) cublasDestroy(cublas_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const DeviceInfo& device() const { return device_; }
  Row run_shape(const Shape& shape);
  // Every shape of the sweep, before anything is printed or allocated.
  void check_fits(const std::vector<Shape>& shapes) const;

 private:
  Problem problem_of(const Shape& shape) const {
    return Problem{shape.m, shape.n, shape.k, options_.alpha, options_.beta};
  }
  size_t flush_bytes() const {
    return options_.verify_only ? 0 : 2 * static_cast<size_t>(device_.l2_bytes);
  }
  void check_fits(const Problem& p, size_t flush_bytes) const;
  void launch_chapter(const Problem& p, const float* A, const float* B, float* C) {
    chapter_.launch(p, A, B, C, stream_);
    CUDA_CHECK(cudaGetLastError());
  }
  VerifyResult verify_run(const Problem& p, const float* dA, const float* dB, const float* dC0,
                          float* dC, float* dRef);
  void time_kernels(const Problem& p, const float* A, const float* B, float* C, float* C_cublas,
                    float* flush, size_t flush_bytes, Row* row);

  const Chapter& chapter_;
  const Options& options_;
  DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

// Checked before allocating, so an impossible shape gets a message instead of a failed cudaMalloc.
void Session::check_fits(const Problem& p, size_t flush_bytes) const {
  const double a = 4.0 * p.m * static_cast<double>(p.k);
  const double b = 4.0 * p.k * static_cast<double>(p.n);
  const double c = 4.0 * p.m * static_cast<double>(p.n);
  const int c_copies = p.beta != 0.0f ? 3 : 2;  // C, the reference, and the start value of C
  const double need = a + b + c_copies * c + static_cast<double>(flush_bytes);
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Leave room for cuBLAS's workspace and the context.
  const double usable = 0.95 * static_cast<double>(free_bytes) - 256e6;
  if (need > usable) {
    throw RuntimeFailure("shape " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
                         std::to_string(p.k) + " needs " + format_bytes(need) +
                         " of device memory (A " + format_bytes(a) + ", B " + format_bytes(b) +
                         ", C " + format_bytes(c) + " x" + std::to_string(c_copies) +
                         ", L2 flush " + format_bytes(static_cast<double>(flush_bytes)) +
                         ") but device " + std::to_string(device_.index) + " has " +
                         format_bytes(static_cast<double>(free_bytes)) + " free");
  }
}

void Session::check_fits(const std::vector<Shape>& shapes) const {
  for (const Shape& shape : shapes) check_fits(problem_of(shape), flush_bytes());
}

VerifyResult Session::verify_run(const Problem& p, const float* dA, const float* dB,
                                 const float* dC0, float* dC, float* dRef) {
  const size_t c_count = static_cast<size_t>(p.m) * p.n;
  // Uninitialised host buffers: zero-filling gigabytes would cost more than the copy into them.
  const std::unique_ptr<float[]> ref(new float[c_count]);
  {
    NvtxRange range("reference");
    if (options_.reference == Reference::kCublas) {
      if (dC0)
        CUDA_CHECK(cudaMemcpyAsync(dRef, dC0, c_count * 4, cudaMemcpyDeviceToDevice, stream_));
      cublas_gemm(cublas_, p, dA, dB, dRef);
      CUDA_CHECK(cudaMemcpyAsync(ref.get(), dRef, c_count * 4, cudaMemcpyDeviceToHost, stream_));
      CUDA_CHECK(cudaStreamSynchronize(stream_));
    } else {
      std::vector<float> a(static_cast<size_t>(p.m) * p.k), b(static_cast<size_t>(p.k) * p.n);
      // On the harness's stream: it is non-blocking, so a plain cudaMemcpy would not wait for
      // the fill kernels and could copy the inputs before they are written.
      CUDA_CHECK(cudaMemcpyAsync(a.data(), dA, a.size() * 4, cudaMemcpyDeviceToHost, stream_));
      CUDA_CHECK(cudaMemcpyAsync(b.data(), dB, b.size() * 4, cudaMemcpyDeviceToHost, stream_));
      if (dC0) {
        CUDA_CHECK(cudaMemcpyAsync(ref.get(), dC0, c_count * 4, cudaMemcpyDeviceToHost, stream_));
      }
      CUDA_CHECK(cudaStreamSynchronize(stream_));
      gemm_reference_cpu(p.m, p.n, p.k, p.alpha, a.data(), b.data(), p.beta, ref.get());
    }
  }
  {
    NvtxRange range("chapter run");
    // Poison: all-ones bits are a NaN, so an element the kernel never writes cannot pass.
    if (dC0) {
      CUDA_CHECK(cudaMemcpyAsync(dC, dC0, c_count * 4, cudaMemcpyDeviceToDevice, stream_));
    } else {
      CUDA_CHECK(cudaMemsetAsync(dC, 0xFF, c_count * 4, stream_));
    }
    launch_chapter(p, dA, dB, dC);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  NvtxRange range("verify");
  const std::unique_ptr<float[]> got(new float[c_count]);
  CUDA_CHECK(cudaMemcpy(got.get(), dC, c_count * 4, cudaMemcpyDeviceToHost));
  return verify(got.get(), ref.get(), p.m, p.n, p.k, options_.tolerance);
}

// Each sample: flush the L2 (so small problems are timed from DRAM, not from the cache), then one
// launch between two events. The chapter and cuBLAS alternate sample by sample, so clock and
// thermal drift affect both alike.
void Session::time_kernels(const Problem& p, const float* A, const float* B, float* C,
                           float* C_cublas, float* flush, size_t flush_bytes, Row* row) {
  NvtxRange range("timing");
  const bool with_cublas = options_.time_cublas;
  auto run_chapter_once = [&] { launch_chapter(p, A, B, C); };
  auto run_cublas_once = [&] { cublas_gemm(cublas_, p, A, B, C_cublas); };

  for (int i = 0; i < options_.warmup; ++i) {
    run_chapter_once();
    if (with_cublas) run_cublas_once();
  }
  // One timed probe of each sizes the sample count to the time budget.
  Event probe_start, probe_stop;
  CUDA_CHECK(cudaEventRecord(probe_start.get(), stream_));
  run_chapter_once();
  if (with_cublas) run_cublas_once();
  CUDA_CHECK(cudaEventRecord(probe_stop.get(), stream_));
  CUDA_CHECK(cudaEventSynchronize(probe_stop.get()));
  float probe_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&probe_ms, probe_start.get(), probe_stop.get()));
  const int affordable = static_cast<int>(options_.time_budget_s * 1e3 / std::max(probe_ms, 1e-3f));
  const int samples = std::min(options_.samples, std::max(kMinSamples, affordable));

  const int kinds = with_cublas ? 2 : 1;
  std::vector<Event> events;
  events.reserve(static_cast<size_t>(samples) * kinds * 2);
  for (int i = 0; i < samples * kinds * 2; ++i) events.emplace_back();
  for (int s = 0; s < samples; ++s) {
    for (int kind = 0; kind < kinds; ++kind) {
      CUDA_CHECK(cudaMemsetAsync(flush, s & 0xFF, flush_bytes, stream_));
      const size_t e = (static_cast<size_t>(s) * kinds + kind) * 2;
      CUDA_CHECK(cudaEventRecord(events[e].get(), stream_));
      kind == 0 ? run_chapter_once() : run_cublas_once();
      CUDA_CHECK(cudaEventRecord(events[e + 1].get(), stream_));
    }
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::vector<float> chapter_ms, cublas_ms;
  for (int s = 0; s < samples; ++s) {
    for (int kind = 0; kind < kinds; ++kind) {
      const size_t e = (static_cast<size_t>(s) * kinds + kind) * 2;
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, events[e].get(), events[e + 1].get()));
      (kind == 0 ? chapter_ms : cublas_ms).push_back(ms);
    }
  }
  const double flops = gemm_flops(p.m, p.n, p.k);
  const Timing t = summarize(chapter_ms);
  row->samples = t.samples;
  row->time_ms = t.median_ms;
  row->noise = t.noise;
  row->tflops = flops / (t.median_ms * 1e-3) / 1e12;
  if (device_.fp32_peak_tflops > 0) row->pct_peak = 100.0 * *row->tflops / device_.fp32_peak_tflops;
  if (with_cublas) {
    const Timing c = summarize(cublas_ms);
    row->cublas_time_ms = c.median_ms;
    row->cublas_tflops = flops / (c.median_ms * 1e-3) / 1e12;
    row->pct_cublas = 100.0 * c.median_ms / t.median_ms;
  }
}

Row Session::run_shape(const Shape& shape) {
  const Problem p = problem_of(shape);
  Row row;
  row.chapter = chapter_.name;
  row.m = p.m;
  row.n = p.n;
  row.k = p.k;
  const double flops = gemm_flops(p.m, p.n, p.k);
  const TileSize tile =
      chapter_.tile_for ? chapter_.tile_for(p) : TileSize{chapter_.tile_m, chapter_.tile_n};
  row.ratio = ratio(flops, tiled_bytes(p.m, p.n, p.k, tile.m, tile.n));
  row.ideal_ratio = ratio(flops, ideal_bytes(p.m, p.n, p.k));
  row.ridge = device_.ridge;
  row.bound = bound(row.ratio, device_.ridge);

  const bool timing = !options_.verify_only;
  const size_t flush_bytes = this->flush_bytes();
  check_fits(p, flush_bytes);  // again: other processes may have taken memory since the start

  const size_t a_count = static_cast<size_t>(p.m) * p.k;
  const size_t b_count = static_cast<size_t>(p.k) * p.n;
  const size_t c_count = static_cast<size_t>(p.m) * p.n;
  DeviceBuffer<float> A(a_count), B(b_count), C(c_count), ref(c_count);
  const bool needs_c0 = p.beta != 0.0f;
  DeviceBuffer<float> C0(needs_c0 ? c_count : 0);
  {
    NvtxRange range("fill");
    fill(A.get(), static_cast<int64_t>(a_count), options_.seed, 1, stream_);
    fill(B.get(), static_cast<int64_t>(b_count), options_.seed, 2, stream_);
    if (needs_c0) fill(C0.get(), static_cast<int64_t>(c_count), options_.seed, 3, stream_);
  }

  if (options_.verify) {
    const VerifyResult v =
        verify_run(p, A.get(), B.get(), needs_c0 ? C0.get() : nullptr, C.get(), ref.get());
    row.verified = true;
    row.pass = v.pass;
    row.max_abs_err = v.max_abs_err;
    row.max_rel_err = v.max_rel_err;
    row.rel_fro_err = v.rel_fro_err;
    row.mismatches = v.mismatches;
    row.first_row = v.first_row;
    row.first_col = v.first_col;
    row.first_got = v.first_got;
    row.first_want = v.first_want;
  }
  if (timing) {
    DeviceBuffer<char> flush(flush_bytes);
    // cuBLAS writes its own output buffer (the reference buffer, already copied to the host).
    time_kernels(p, A.get(), B.get(), C.get(), ref.get(), reinterpret_cast<float*>(flush.get()),
                 flush_bytes, &row);
  }
  return row;
}

}  // namespace

int run_chapter(const Chapter& chapter, int argc, char** argv) {
  Options options;
  const ParseOutcome parsed = parse_options(argc, argv, chapter.name, chapter.title, &options);
  if (!parsed.proceed) {
    (parsed.exit_code == kExitPass ? std::cout : std::cerr)
        << parsed.message << (parsed.message.empty() || parsed.message.back() == '\n' ? "" : "\n");
    return parsed.exit_code;
  }
  std::ofstream file;
  if (!options.output_path.empty()) {
    file.open(options.output_path);
    if (!file) {
      std::cerr << "error: cannot write --output " << options.output_path << "\n";
      return kExitUsage;
    }
  }
  std::ostream& out = options.output_path.empty() ? std::cout : file;
  try {
    Session session(chapter, options);
    Reporter reporter(out, options.format);
    RunInfo run{chapter.name,
                chapter.title,
                options.command_line,
                utc_now(),
                options.reference == Reference::kCublas ? kReferenceCublas : kReferenceCpu,
                &options};
    session.check_fits(options.shapes);
    reporter.begin(run, session.device());
    bool all_pass = true;
    for (const Shape& shape : options.shapes) {
      const Row row = session.run_shape(shape);
      all_pass = all_pass && (!row.verified || row.pass);
      reporter.row(row);
    }
    reporter.finish();
    return all_pass ? kExitPass : kExitWrongResult;
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const RuntimeFailure& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitRuntime;
  } catch (const std::exception& e) {  // std::bad_alloc of a host buffer, for one
    std::cerr << "error: " << e.what() << "\n";
    return kExitRuntime;
  }
}

}  // namespace sgemm
