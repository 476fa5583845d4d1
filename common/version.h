// SPDX-License-Identifier: MIT
#pragma once

namespace sgemm {

inline constexpr char kProjectVersion[] = "1.0.0";

}  // namespace sgemm
