// The order in which the walk's persistent grid takes the groups (groups.h, WalkSchedule): the
// most expected work first (in half octaves, key order within), so that the grid ends on short
// groups rather than on one long group while most warps idle. A group's expected work is the sum
// of its targets' last measured work, carried from walk to walk here (rememberWork, carryWork);
// without it, its targets. Only the order of the work depends on it, never a result.
//
// Why the work and not the size: under the acceleration MAC a group near the centre, where
// |a| → 0, took 16× the mean group's work on the 1 M merger (docs/BENCHMARKS.md, "Against
// Ryoanji on its own cube, every MAC"); bench_walk_schedule's model of the grid put the walk at
// 1.22 of perfect balance taking the fullest first, 1.01 taking the most work first.
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/groups.h"

namespace bhviz::sim::cuda {

namespace {

/// Sort keys of the walk order: the more expected work, the smaller the key, in half octaves
/// (the class 2k + b of a work w with 2^k ≤ w < 2^(k+1) and b = 1 where w ≥ 1.5·2^k: 0..63), so
/// that groups of about the same work keep their key order, and with
/// it the tree cells they share stay in cache (an order by the exact previous cost lost 1-2 % to
/// that, sim/cuda/NOTES.md); slots beyond the current groups last.
__global__ void orderKeysKernel(const std::uint32_t* __restrict__ expected,
                                const std::uint32_t* __restrict__ groups, std::uint32_t items,
                                std::uint8_t* __restrict__ key, std::uint32_t* __restrict__ order) {
  const std::uint32_t n = *groups;
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < items;
       i += gridDim.x * blockDim.x) {
    std::uint8_t k = 255;
    if (i < n) {
      const std::uint32_t w = max(expected[i], 1u);
      const int octave = 31 - __clz(w);
      const int half = octave > 0 ? int((w >> (octave - 1)) & 1u) : 0;
      k = std::uint8_t(63 - (2 * octave + half));
    }
    key[i] = k;
    order[i] = i;
  }
}

/// A sample's walk order: groups 0, every, 2·every, … of the `groups` made, and their number.
__global__ void sampleOrderKernel(const std::uint32_t* __restrict__ groups, std::uint32_t every,
                                  std::uint32_t items, std::uint32_t* __restrict__ order,
                                  std::uint32_t* __restrict__ count) {
  const std::uint32_t walked = min((*groups + every - 1) / every, items);
  if (blockIdx.x == 0 && threadIdx.x == 0) *count = walked;
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < walked;
       i += gridDim.x * blockDim.x) {
    order[i] = i * every;
  }
}

__global__ void rememberWorkKernel(const std::uint32_t* __restrict__ work,
                                   std::uint32_t* __restrict__ last, std::uint32_t n) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && work[i] > 0) last[i] = work[i];
}

__global__ void carryWorkKernel(const std::uint32_t* __restrict__ order, std::uint32_t n,
                                const std::uint32_t* __restrict__ from,
                                std::uint32_t* __restrict__ to) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) to[k] = from[order[k]];
}

}  // namespace

const std::uint32_t* scheduleGroups(const DeviceGroups& g, Stream stream) {
  WalkSchedule& w = g.schedule;
  // Every slot a group of the last launchGroups can be in (the count is on the device).
  const std::size_t items = std::max<std::size_t>(1, std::min(g.bound, g.capacity));
  for (int k = 0; k < 2; ++k) {
    w.key[k].reserve(items);
    w.order[k].reserve(items);
  }
  orderKeysKernel<<<264, 256, 0, stream>>>(g.expected.data(), g.size.data(), std::uint32_t(items),
                                           w.key[0].data(), w.order[0].data());
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

GroupOrder sampleGroups(const DeviceGroups& g, std::uint32_t every, Stream stream) {
  WalkSchedule& w = g.schedule;
  const std::size_t slots = std::max<std::size_t>(1, std::min(g.bound, g.capacity));
  const std::size_t items = (slots + every - 1) / every;
  w.order[1].reserve(items);
  w.sampled.reserve(1);
  sampleOrderKernel<<<std::min(blocksFor(items), 264u), kBlock, 0, stream>>>(
      g.size.data(), every, std::uint32_t(items), w.order[1].data(), w.sampled.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  return {w.order[1].data(), w.sampled.data()};
}

void rememberWork(const std::uint32_t* work, std::uint32_t* last, std::size_t n, Stream stream) {
  if (n == 0) return;
  rememberWorkKernel<<<blocksFor(n), kBlock, 0, stream>>>(work, last, std::uint32_t(n));
  BHVIZ_CUDA_CHECK_LAUNCH();
}

void carryWork(const std::uint32_t* order, std::size_t n, DeviceBuffer<std::uint32_t>& last,
               DeviceBuffer<std::uint32_t>& scratch, Stream stream) {
  if (n == 0) return;
  scratch.reserve(n);
  carryWorkKernel<<<blocksFor(n), kBlock, 0, stream>>>(order, std::uint32_t(n), last.data(),
                                                       scratch.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  last.swap(scratch);
}

}  // namespace bhviz::sim::cuda
