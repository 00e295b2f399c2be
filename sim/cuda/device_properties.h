#pragma once
// What the launches need to know of the device they run on. The backend queries it once for its
// device when it is made, and tests and benchmarks before their launches; the launches that size
// their grids by the device take it as an argument. A function-static cache instead would keep
// the first device's values for every device of the process. Plain C++.

namespace bhviz::sim::cuda {

/// The walk's kernels: 1, 2 or 4 target slots per lane, each with and without the quadrupole,
/// each with and without the potential.
inline constexpr int kWalkKernels = 12;

struct DeviceProperties {
  int ordinal = -1;         ///< the CUDA device these describe
  int multiProcessors = 0;  ///< streaming multiprocessors (SMs)
  /// Resident blocks of each walk kernel on the whole device (SMs × blocks per SM from the
  /// occupancy calculator, at least 1): the size of the walk's persistent grid. Indexed as
  /// walk.cu's walkKernelIndex.
  unsigned walkBlocks[kWalkKernels] = {};
};

/// The properties of the calling thread's current device (blocking; throws std::runtime_error
/// on a CUDA error, e.g. when there is no device). Launches given them must run with that device
/// current, as every launch of the backend that holds them does.
DeviceProperties queryDeviceProperties();

}  // namespace bhviz::sim::cuda
