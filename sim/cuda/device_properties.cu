// The device's properties that the launches size their grids by (device_properties.h), and the
// queries of cuda_backend.h: the device's description, its free memory for N particles, which
// device a rank takes.
#include <sstream>
#include <string>

#include "sim/cuda/cuda_backend.h"
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/device_properties.h"
#include "sim/cuda/walk.h"

namespace bhviz::sim::cuda {

DeviceProperties queryDeviceProperties() {
  DeviceProperties d;
  BHVIZ_CUDA_CHECK(cudaGetDevice(&d.ordinal));
  BHVIZ_CUDA_CHECK(
      cudaDeviceGetAttribute(&d.multiProcessors, cudaDevAttrMultiProcessorCount, d.ordinal));
  queryWalkBlocks(d);
  return d;
}

std::string deviceDescription() {
  if (deviceCount() == 0) throw CudaUnavailable("no CUDA device found");
  int device = 0;
  BHVIZ_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  BHVIZ_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::ostringstream s;
  s.precision(4);
  s << prop.name << " (" << prop.multiProcessorCount << " SMs, "
    << double(prop.totalGlobalMem) / 1073741824.0 << " GiB)";
  return s.str();
}

void checkDeviceCapacity(std::size_t n, double bytesPerParticle) {
  if (deviceCount() == 0) throw CudaUnavailable("no CUDA device found");
  std::size_t freeBytes = 0, totalBytes = 0;
  BHVIZ_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  const double need = double(n) * bytesPerParticle;
  if (need > double(freeBytes)) {
    std::ostringstream s;
    s.precision(3);
    s << n << " particles need about " << need / 1073741824.0 << " GiB of GPU memory, but only "
      << double(freeBytes) / 1073741824.0 << " GiB are free";
    throw CudaUnavailable(s.str());
  }
}

void useDevice(int ordinal) {
  const int count = deviceCount();
  if (count == 0) throw CudaUnavailable("no CUDA device found");
  BHVIZ_CUDA_CHECK(cudaSetDevice(ordinal % count));
}

}  // namespace bhviz::sim::cuda
