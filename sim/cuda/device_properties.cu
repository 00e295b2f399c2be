// The device's properties that the launches size their grids by (device_properties.h).
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

}  // namespace bhviz::sim::cuda
