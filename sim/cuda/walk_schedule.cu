// The order in which the walk's persistent grid takes the groups (groups.h, WalkSchedule): the
// fullest first, so that the grid ends on small groups rather than on one long group while most
// warps idle. Only the order of the work depends on it, never a result.
#include <cub/device/device_radix_sort.cuh>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/groups.h"

namespace bhviz::sim::cuda {

namespace {

/// Sort keys of the walk order: the more particles, the smaller the key; slots beyond the
/// current groups last.
__global__ void orderKeysKernel(const std::uint32_t* __restrict__ groupCount,
                                const std::uint32_t* __restrict__ groups, std::uint32_t items,
                                std::uint8_t* __restrict__ key, std::uint32_t* __restrict__ order) {
  const std::uint32_t n = *groups;
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < items;
       i += gridDim.x * blockDim.x) {
    key[i] = std::uint8_t(i < n ? 254u - min(groupCount[i], 254u) : 255u);
    order[i] = i;
  }
}

}  // namespace

const std::uint32_t* scheduleGroups(const DeviceGroups& g, Stream stream) {
  WalkSchedule& w = g.schedule;
  const std::size_t items = g.capacity;
  for (int k = 0; k < 2; ++k) {
    w.key[k].reserve(items);
    w.order[k].reserve(items);
  }
  orderKeysKernel<<<264, 256, 0, stream>>>(g.targetCount.data(), g.size.data(),
                                           std::uint32_t(items), w.key[0].data(),
                                           w.order[0].data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  std::size_t bytes = 0;
  BHVIZ_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, w.key[0].data(), w.key[1].data(),
                                                   w.order[0].data(), w.order[1].data(), int(items),
                                                   0, 8, stream));
  w.temp.reserve(bytes);
  BHVIZ_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(w.temp.data(), bytes, w.key[0].data(),
                                                   w.key[1].data(), w.order[0].data(),
                                                   w.order[1].data(), int(items), 0, 8, stream));
  return w.order[1].data();
}

}  // namespace bhviz::sim::cuda
