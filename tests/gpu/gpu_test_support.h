#pragma once
// What every GPU test file asks first: whether there is a CUDA device to test on. Without one the
// tests skip (GTEST_SKIP), so that the files build and run on the CPU-only machine too.

#include "sim/cuda/device_buffer.h"

namespace bhviz::test {

/// Whether a CUDA device is present (asked once).
inline bool haveGpu() {
  static const bool have = sim::cuda::deviceCount() > 0;
  return have;
}

}  // namespace bhviz::test
