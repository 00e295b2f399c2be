#pragma once
// BHVIZ_CUDA_CHECK(expr): throws std::runtime_error naming the call, file and line when a CUDA
// runtime call fails. BHVIZ_CUDA_CHECK_LAUNCH() does the same for the last kernel launch.

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace bhviz::sim::cuda {

[[noreturn]] inline void throwCudaError(cudaError_t err, const char* expr, const char* file,
                                        int line) {
  // Clear the (non-sticky) error state: a caller that catches this and carries on must not see
  // the error again from an unrelated later call (CUB's checks read cudaGetLastError too).
  (void)cudaGetLastError();
  throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                           cudaGetErrorString(err) + ") in " + expr + " at " + file + ":" +
                           std::to_string(line));
}

/// Threads per block of the simple one-element-per-thread kernels.
inline constexpr int kBlock = 256;

inline unsigned blocksFor(std::size_t n, int block = kBlock) {
  return static_cast<unsigned>((n + block - 1) / block);
}

}  // namespace bhviz::sim::cuda

#define BHVIZ_CUDA_CHECK(expr)                                                  \
  do {                                                                          \
    const cudaError_t bhvizErr_ = (expr);                                       \
    if (bhvizErr_ != cudaSuccess)                                               \
      ::bhviz::sim::cuda::throwCudaError(bhvizErr_, #expr, __FILE__, __LINE__); \
  } while (0)

#define BHVIZ_CUDA_CHECK_LAUNCH() BHVIZ_CUDA_CHECK(cudaGetLastError())
