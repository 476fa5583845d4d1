// SPDX-License-Identifier: MIT
// The harness sequence, written once: options -> device -> buffers -> seeded fill -> reference ->
// poisoned C -> one run -> verify -> a second run (determinism) -> errors against FP64 ->
// timing (chapter and cuBLAS alike) -> report. docs/methodology.md explains each step.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/accuracy.h"
#include "common/check.h"
#include "common/cublas_gemm.h"
#include "common/device.h"
#include "common/harness.h"
#include "common/inputs.h"
#include "common/options.h"
#include "common/report.h"
#include "common/resources.h"
#include "common/roofline.h"
#include "common/timing.h"
#include "common/verify.h"

namespace sgemm {
namespace {

constexpr char kReferenceCpu[] = "CPU, double accumulation";
constexpr char kReferenceFp64[] = "FP64 GEMM on the GPU (cublasDgemm), rounded to float";

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

std::string shape_text(const Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
}

class Session {
 public:
  Session(const Chapter& chapter, const Options& options)
      : chapter_(chapter), options_(options), mode_(cublas_mode_for(chapter.precision)) {
    device_ = query_device(select_device(options.device));
    if (chapter.unsupported) {
      const std::string why = chapter.unsupported(device_);
      if (!why.empty()) throw RuntimeFailure(std::string(chapter.name) + " " + why);
    }
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
  CublasMode mode() const { return mode_; }
  std::string reference_name() const {
    switch (options_.reference) {
      case Reference::kCpu:
        return kReferenceCpu;
      case Reference::kFp64:
        return kReferenceFp64;
      case Reference::kCublas:
      default:
        return cublas_mode_name(CublasMode::kFp32);
    }
  }
  Row run_shape(const Shape& shape);
  // Every shape of the sweep, before anything is printed or allocated.
  void check_fits(const std::vector<Shape>& shapes) const {
    for (const Shape& shape : shapes) check_fits(problem_of(shape));
  }

 private:
  Problem problem_of(const Shape& shape) const {
    Problem p;
    p.m = shape.m;
    p.n = shape.n;
    p.k = shape.k;
    p.alpha = options_.alpha;
    p.beta = options_.beta;
    return p;
  }
  size_t flush_bytes() const {
    return options_.verify_only ? 0 : 2 * static_cast<size_t>(device_.l2_bytes);
  }
  size_t workspace_bytes(const Problem& p) const {
    return chapter_.workspace_bytes ? chapter_.workspace_bytes(p) : 0;
  }
  // The FP64 reference is optional (the accuracy columns are left empty when it does not fit)
  // unless the verdict rests on it: it is the verification reference, or the accuracy contract
  // compares against it.
  bool fp64_required() const {
    return (options_.verify && options_.reference == Reference::kFp64) ||
           options_.accuracy_limit > 0;
  }
  // Bytes the run needs besides the FP64 reference (see fp64_required()).
  double bytes_needed(const Problem& p) const;
  double free_bytes() const;
  void check_fits(const Problem& p) const;
  void launch_chapter(const Problem& p, const float* A, const float* B, float* C) {
    chapter_.launch(p, A, B, C, stream_);
    CUDA_CHECK(cudaGetLastError());
  }
  // C's value before the run: a copy of C0 when beta != 0, else NaN (all-ones bytes), so an
  // element the kernel never writes cannot pass.
  void reset_c(float* C, const float* C0, size_t count) {
    if (C0) {
      CUDA_CHECK(cudaMemcpyAsync(C, C0, count * 4, cudaMemcpyDeviceToDevice, stream_));
    } else {
      CUDA_CHECK(cudaMemsetAsync(C, 0xFF, count * 4, stream_));
    }
  }
  void reference_on_host(const Problem& p, const float* dA, const float* dB, const float* dC0,
                         float* dRef, const Fp64Reference* fp64, float* ref);
  void measure_accuracy(const Problem& p, const float* dA, const float* dB, const float* dC0,
                        const float* dC, float* dScratch, const Fp64Reference& fp64, Row* row);

  const Chapter& chapter_;
  const Options& options_;
  CublasMode mode_;
  DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

double Session::bytes_needed(const Problem& p) const {
  const double a = 4.0 * p.m * static_cast<double>(p.k);
  const double b = 4.0 * p.k * static_cast<double>(p.n);
  const double c = 4.0 * p.m * static_cast<double>(p.n);
  const int c_copies = p.beta != 0.0f ? 3 : 2;  // C, the reference, and the start value of C
  return a + b + c_copies * c + static_cast<double>(flush_bytes()) +
         static_cast<double>(workspace_bytes(p));
}

double Session::free_bytes() const {
  size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  // Leave room for cuBLAS's workspace and the context.
  return 0.95 * static_cast<double>(free) - 256e6;
}

// Checked before allocating, so an impossible shape gets a message instead of a failed cudaMalloc.
void Session::check_fits(const Problem& p) const {
  double need = bytes_needed(p);
  if (fp64_required()) need += Fp64Reference::bytes_needed(p);
  size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (need > free_bytes()) {
    const double c = 4.0 * p.m * static_cast<double>(p.n);
    throw RuntimeFailure(
        "shape " + shape_text(p) + " needs " + format_bytes(need) + " of device memory (A " +
        format_bytes(4.0 * p.m * static_cast<double>(p.k)) + ", B " +
        format_bytes(4.0 * p.k * static_cast<double>(p.n)) + ", C " + format_bytes(c) + " x" +
        std::to_string(p.beta != 0.0f ? 3 : 2) + ", L2 flush " +
        format_bytes(static_cast<double>(flush_bytes())) +
        (workspace_bytes(p) ? ", workspace " + format_bytes(workspace_bytes(p)) : "") +
        (fp64_required() ? ", FP64 reference " + format_bytes(Fp64Reference::bytes_needed(p))
                         : "") +
        ") but device " + std::to_string(device_.index) + " has " +
        format_bytes(static_cast<double>(free)) + " free");
  }
}

// The verification reference, copied to the host (ref).
void Session::reference_on_host(const Problem& p, const float* dA, const float* dB,
                                const float* dC0, float* dRef, const Fp64Reference* fp64,
                                float* ref) {
  NvtxRange range("reference");
  const size_t c_count = static_cast<size_t>(p.m) * p.n;
  if (options_.reference == Reference::kCpu) {
    std::vector<float> a(static_cast<size_t>(p.m) * p.k), b(static_cast<size_t>(p.k) * p.n);
    // On the harness's stream: it is non-blocking, so a plain cudaMemcpy would not wait for the
    // fill kernels and could copy the inputs before they are written.
    CUDA_CHECK(cudaMemcpyAsync(a.data(), dA, a.size() * 4, cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaMemcpyAsync(b.data(), dB, b.size() * 4, cudaMemcpyDeviceToHost, stream_));
    if (dC0) {
      CUDA_CHECK(cudaMemcpyAsync(ref, dC0, c_count * 4, cudaMemcpyDeviceToHost, stream_));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    gemm_reference_cpu(p.m, p.n, p.k, p.alpha, a.data(), b.data(), p.beta, ref);
    return;
  }
  if (options_.reference == Reference::kFp64) {
    fp64->round_to_float(dRef, stream_);
  } else {
    // Always cuBLAS FP32, also for a TF32 chapter: the most accurate cuBLAS result, with the
    // tolerance of the chapter's contract.
    if (dC0) CUDA_CHECK(cudaMemcpyAsync(dRef, dC0, c_count * 4, cudaMemcpyDeviceToDevice, stream_));
    cublas_gemm(cublas_, p, dA, dB, dRef, CublasMode::kFp32);
  }
  CUDA_CHECK(cudaMemcpyAsync(ref, dRef, c_count * 4, cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// The chapter's errors against FP64, and cuBLAS FP32's (and TF32's for a TF32 chapter) on the
// same inputs, computed into dScratch.
void Session::measure_accuracy(const Problem& p, const float* dA, const float* dB,
                               const float* dC0, const float* dC, float* dScratch,
                               const Fp64Reference& fp64, Row* row) {
  NvtxRange range("accuracy");
  const size_t c_count = static_cast<size_t>(p.m) * p.n;
  row->fp64_err = fp64.errors_of(dC, stream_);
  for (CublasMode mode : {CublasMode::kFp32, CublasMode::kTf32}) {
    if (mode == CublasMode::kTf32 && chapter_.precision != Precision::kTf32) continue;
    reset_c(dScratch, dC0, c_count);
    cublas_gemm(cublas_, p, dA, dB, dScratch, mode);
    (mode == CublasMode::kFp32 ? row->cublas_fp32_err : row->cublas_tf32_err) =
        fp64.errors_of(dScratch, stream_);
  }
}

Row Session::run_shape(const Shape& shape) {
  Problem p = problem_of(shape);
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

  check_fits(p);  // again: other processes may have taken memory since the start
  const size_t a_count = static_cast<size_t>(p.m) * p.k;
  const size_t b_count = static_cast<size_t>(p.k) * p.n;
  const size_t c_count = static_cast<size_t>(p.m) * p.n;
  DeviceBuffer<float> A(a_count), B(b_count), C(c_count), scratch(c_count);
  const bool needs_c0 = p.beta != 0.0f;
  DeviceBuffer<float> C0(needs_c0 ? c_count : 0);
  const float* c0 = needs_c0 ? C0.get() : nullptr;
  DeviceBuffer<char> workspace(workspace_bytes(p));
  if (workspace_bytes(p) > 0) {
    p.workspace = workspace.get();
    p.workspace_size = workspace.bytes();
  }
  {
    NvtxRange range("fill");
    fill_device(A.get(), static_cast<int64_t>(a_count), options_.dist, options_.seed, kStreamA,
                stream_);
    fill_device(B.get(), static_cast<int64_t>(b_count), options_.dist, options_.seed, kStreamB,
                stream_);
    if (needs_c0) {
      fill_device(C0.get(), static_cast<int64_t>(c_count), options_.dist, options_.seed, kStreamC0,
                  stream_);
    }
  }

  // The FP64 reference: needed to verify against it or for the accuracy contract, else for the
  // accuracy columns when it fits.
  std::unique_ptr<Fp64Reference> fp64;
  if (fp64_required() || options_.accuracy) {
    // The run's own buffers are allocated by now, and the reference is freed before the L2-flush
    // buffer of the timing loop exists: only the double copies must fit in what is free.
    const double need = static_cast<double>(Fp64Reference::bytes_needed(p));
    if (fp64_required() || need <= free_bytes()) {
      NvtxRange range("fp64 reference");
      fp64 = std::make_unique<Fp64Reference>(cublas_, stream_, p, A.get(), B.get(), c0);
    } else {
      row.accuracy_note = "FP64 columns skipped: the double copies need " +
                          format_bytes(static_cast<double>(Fp64Reference::bytes_needed(p))) +
                          " more than the device has free";
    }
  }

  if (options_.verify) {
    // Uninitialised host buffers: zero-filling gigabytes would cost more than the copy into them.
    const std::unique_ptr<float[]> ref(new float[c_count]);
    reference_on_host(p, A.get(), B.get(), c0, scratch.get(), fp64.get(), ref.get());
    {
      NvtxRange range("chapter run");
      reset_c(C.get(), c0, c_count);
      launch_chapter(p, A.get(), B.get(), C.get());
      CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    NvtxRange range("verify");
    const std::unique_ptr<float[]> got(new float[c_count]);
    CUDA_CHECK(cudaMemcpy(got.get(), C.get(), c_count * 4, cudaMemcpyDeviceToHost));
    const VerifyResult v =
        verify(got.get(), ref.get(), p.m, p.n, p.k, options_.tolerance,
               chapter_.precision == Precision::kTf32 ? kTf32InputRounding : 0.0);
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
  } else {
    reset_c(C.get(), c0, c_count);
    launch_chapter(p, A.get(), B.get(), C.get());
  }
  if (fp64 && options_.accuracy) {
    measure_accuracy(p, A.get(), B.get(), c0, C.get(), scratch.get(), *fp64, &row);
    if (options_.accuracy_limit > 0) {
      // Against cuBLAS in the mode of the chapter's contract: FP32 for FP32, TF32 for TF32.
      const std::optional<ErrorStats>& baseline =
          mode_ == CublasMode::kTf32 ? row.cublas_tf32_err : row.cublas_fp32_err;
      row.accuracy_contract = judge_accuracy(
          *row.fp64_err, *baseline, mode_ == CublasMode::kTf32 ? "cuBLAS TF32" : "cuBLAS FP32",
          options_.accuracy_limit);
    }
  }
  fp64.reset();  // its memory back before timing
  if (options_.verify) {
    // Determinism: the same inputs again, into the scratch buffer, must give the same bits.
    NvtxRange range("determinism");
    reset_c(scratch.get(), c0, c_count);
    launch_chapter(p, A.get(), B.get(), scratch.get());
    row.run_differences =
        count_bit_differences(C.get(), scratch.get(), static_cast<int64_t>(c_count), stream_);
  }

  if (!options_.verify_only) {
    DeviceBuffer<char> flush(flush_bytes());
    TimingPlan plan;
    plan.warmup = options_.warmup;
    plan.samples = options_.samples;
    plan.time_budget_s = options_.time_budget_s;
    plan.flush = flush.get();
    plan.flush_bytes = flush.bytes();
    // cuBLAS writes into the scratch buffer; with beta != 0 both kernels accumulate onto what
    // they wrote last, which changes no timing.
    const TimingPair t = time_alternating(
        stream_, plan, [&] { launch_chapter(p, A.get(), B.get(), C.get()); },
        options_.time_cublas
            ? std::function<void()>([&] { cublas_gemm(cublas_, p, A.get(), B.get(),
                                                      scratch.get(), mode_); })
            : std::function<void()>());
    row.samples = t.first.samples;
    row.time_ms = t.first.median_ms;
    row.noise = t.first.noise;
    row.tflops = flops / (t.first.median_ms * 1e-3) / 1e12;
    if (device_.fp32_peak_tflops > 0) {
      row.pct_peak = 100.0 * *row.tflops / device_.fp32_peak_tflops;
    }
    if (options_.time_cublas) {
      row.cublas_time_ms = t.second.median_ms;
      row.cublas_tflops = flops / (t.second.median_ms * 1e-3) / 1e12;
      row.pct_cublas = 100.0 * t.second.median_ms / t.first.median_ms;
    }
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
    RunInfo run;
    run.chapter = chapter.name;
    run.title = chapter.title;
    run.command_line = options.command_line;
    run.date = utc_now();
    run.reference = session.reference_name();
    run.precision = chapter.precision == Precision::kTf32 ? "TF32" : "FP32";
    run.compared_with = cublas_mode_name(session.mode());
    run.options = &options;
    session.check_fits(options.shapes);
    reporter.begin(run, session.device());
    bool all_pass = true;
    for (const Shape& shape : options.shapes) {
      const Row row = session.run_shape(shape);
      all_pass = all_pass && row.status() != "FAIL";
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
