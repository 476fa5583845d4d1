// SPDX-License-Identifier: MIT
// The GPU a run uses: picking it, and what the report says about it (name, clocks, peaks,
// versions). DeviceInfo is plain data, so the host-only report code can print it; the functions
// that fill it live in device.cu.
#pragma once

#include <cstdint>
#include <string>

namespace sgemm {

struct DeviceInfo {
  std::string name;
  int index = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int sms = 0;
  double sm_clock_mhz = 0;
  double mem_clock_mhz = 0;
  int bus_width_bits = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int fp32_lanes_per_sm = 0;  // 0: architecture not in the table (common/roofline.cpp)
  double fp32_peak_tflops = 0;
  double dram_bandwidth_gbs = 0;
  double ridge = 0;    // FLOP per byte
  std::string driver;  // "13.0"
  std::string runtime;
  std::string cublas;  // "13.1.0"
};

// Makes device `requested` current. No usable GPU: RuntimeFailure whose message starts with
// "no CUDA GPU found" and says which case it is (no driver, no device, driver too old). An index
// past the last device: UsageError.
int select_device(int requested);

// Reads the device's properties and attributes, and the driver, runtime and cuBLAS versions.
DeviceInfo query_device(int index);

// query_device of the device current in this process (the harness makes the chosen one current
// before any launch), read once: where a launcher's cost model takes its peaks from.
const DeviceInfo& current_device();

}  // namespace sgemm
