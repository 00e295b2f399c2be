// A tree rebuilt around the targets, on the device (local_rebuild.h): the twin of
// cpu::coverTargets and cpu::rekeyCells.
//
//   1. An exclusive scan of the targets' flags: a cell's targets are the difference of two
//      entries (its range's ends).
//   2. coverKernel, a thread a cell, decides the cover without a traversal: a cell is covered
//      when it holds targets and stops the split (a leaf, or its targets are at least `share` of
//      its particles) while every cell above it, up to the smallest holding every target, split
//      (their targets were fewer than `share` of theirs). Each covered cell c adds c + 1 at its
//      range's start and subtracts it at its end; an inclusive scan then gives every particle
//      its covering cell (+1; 0: none), since the covered cells are disjoint.
//   3. The covered slots are selected in order (cub::DeviceSelect), and the census read back:
//      the one wait, for the sort's size.
//   4. keysKernel gives each covered particle its new key, clamped into its cell's cube (so
//      that it keeps its cell's key prefix and its place among the other cells), and gathers it
//      into the scratch; one radix sort of all of them, over the bits below the prefix every
//      covered key shares, sorts each cell's within its range (the cells' key ranges are
//      disjoint and in the same order as their particle ranges); scatterKernel writes them back.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstring>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "sim/common/cover.h"
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/hilbert_table.cuh"
#include "sim/cuda/local_rebuild.h"
#include "sim/cuda/particle_view.cuh"

namespace bhviz::sim::cuda {

namespace {

struct CoveredSlot {
  const std::uint32_t* cellOf;
  __device__ bool operator()(std::uint32_t i) const { return cellOf[i] != 0; }
};

struct CoverCells {
  const std::uint32_t* first;
  const std::uint32_t* count;
  const std::uint32_t* child;
  const std::uint32_t* parent;
  const std::uint8_t* childCount;
  const std::uint8_t* level;
};

__global__ void coverKernel(std::uint32_t cells, CoverCells t,
                            const std::uint32_t* __restrict__ activeBefore, std::uint32_t n,
                            double share, std::uint32_t* cellOf, CoverCensus* census) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cells) return;
  const std::uint32_t total = activeBefore[n];
  const auto targets = [&](std::uint32_t a) {
    return activeBefore[t.first[a] + t.count[a]] - activeBefore[t.first[a]];
  };
  const auto splits = [&](std::uint32_t a, std::uint32_t k) {
    return coverSplits(k, t.count[a], t.childCount[a], share);
  };
  const std::uint32_t k = targets(c);
  if (k == 0) return;
  if (k == total) {
    // The smallest cell holding every target is the one none of whose children holds them all.
    for (unsigned j = 0; j < t.childCount[c]; ++j) {
      if (targets(t.child[c] + j) == total) return;
    }
    census->commonLevel = t.level[c];
    if (splits(c, k)) return;
  } else {
    if (splits(c, k)) return;
    // Every cell above, up to the first holding every target (the smallest such), split.
    for (std::uint32_t a = t.parent[c];; a = t.parent[a]) {
      const std::uint32_t ka = targets(a);
      if (!splits(a, ka)) return;
      if (ka == total) break;
    }
  }
  atomicAdd(&cellOf[t.first[c]], c + 1);
  atomicAdd(&cellOf[t.first[c] + t.count[c]], 0u - (c + 1));  // wraps back at the range's end
  atomicAdd(&census->cells, 1u);
  atomicAdd(&census->particles, t.count[c]);
}

__global__ void keysKernel(std::uint32_t m, const std::uint32_t* __restrict__ covered,
                           const std::uint32_t* __restrict__ cellOf,
                           const std::uint32_t* __restrict__ cellFirst,
                           const std::uint8_t* __restrict__ cellLevel,
                           const std::uint64_t* __restrict__ oldKeys,
                           const KeyFrame* __restrict__ frame, Curve curve, ParticleView p,
                           const std::uint32_t* __restrict__ carried, std::uint64_t* newKeys,
                           std::uint32_t* from, ParticleSpans gathered,
                           std::uint32_t* carriedGathered) {
  const std::uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= m) return;
  const std::uint32_t i = covered[j];
  const std::uint32_t c = cellOf[i] - 1;
  // The cell's cube: that of its first key's point, as cpu::rekeyCells.
  const KeyCoords inCell = decodeKey(curve, oldKeys[cellFirst[c]]);
  const KeyCoords q = quantize(xyz(p.posMass[i]), *frame);
  newKeys[j] = encodeKeyByTable(curve, clampIntoCell(q, inCell, cellLevel[c]), kDeviceHilbertTable);
  from[j] = j;
  copyParticle(p, i, gathered, j);
  if (carried != nullptr) carriedGathered[j] = carried[i];
}

__global__ void scatterKernel(std::uint32_t m, const std::uint32_t* __restrict__ covered,
                              const std::uint64_t* __restrict__ sortedKeys,
                              const std::uint32_t* __restrict__ from, ParticleView gathered,
                              const std::uint32_t* __restrict__ carriedGathered,
                              std::uint64_t* keys, ParticleSpans p, std::uint32_t* carried) {
  const std::uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= m) return;
  const std::uint32_t i = covered[j], s = from[j];
  keys[i] = sortedKeys[j];
  copyParticle(gathered, s, p, i);
  if (carried != nullptr) carried[i] = carriedGathered[s];
}

}  // namespace

void CoverWorkspace::reserve(std::size_t n) {
  // The CUB storage of each pass over n particles (the queries launch nothing).
  const int items = static_cast<int>(n);
  const thrust::counting_iterator<std::uint32_t> indices(0);
  const thrust::transform_iterator<ActiveFlag, thrust::counting_iterator<std::uint32_t>> flags(
      indices, ActiveFlag{nullptr, {}, 0});
  std::size_t scanBytes = 0, markBytes = 0, selectBytes = 0, sortBytes = 0;
  BHVIZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scanBytes, flags,
                                                 static_cast<std::uint32_t*>(nullptr), items + 1));
  BHVIZ_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, markBytes,
                                                 static_cast<std::uint32_t*>(nullptr),
                                                 static_cast<std::uint32_t*>(nullptr), items));
  BHVIZ_CUDA_CHECK(
      cub::DeviceSelect::If(nullptr, selectBytes, indices, static_cast<std::uint32_t*>(nullptr),
                            static_cast<std::uint32_t*>(nullptr), items, CoveredSlot{nullptr}));
  cub::DoubleBuffer<std::uint64_t> sortKeys(nullptr, nullptr);
  cub::DoubleBuffer<std::uint32_t> sortFrom(nullptr, nullptr);
  BHVIZ_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, sortKeys, sortFrom, items, 0,
                                                   3 * kKeyBitsPerAxis));
  temp.reserve(std::max({scanBytes, markBytes, selectBytes, sortBytes}));
  activeBefore.reserve(n + 1);
  cellOf.reserve(n + 1);
  covered.reserve(n);
  for (auto& b : keys) b.reserve(n);
  for (auto& b : from) b.reserve(n);
  carried.reserve(n);
  census.reserve(1);
  selected.reserve(1);
}

CoverCensus launchCoverAndRekey(DeviceParticles& p, const DeviceTree& tree, const ActiveRule& rule,
                                double share, Curve curve, BuildWorkspace& ws, CoverWorkspace& cw,
                                std::uint32_t* carried, Stream stream) {
  const std::size_t n = p.n;
  if (n == 0 || tree.cells == 0) return {0, 0, kMaxLevel + 1};
  const int items = static_cast<int>(n);
  cw.reserve(n);

  // 1. Targets before each particle.
  const thrust::counting_iterator<std::uint32_t> indices(0);
  const thrust::transform_iterator<ActiveFlag, thrust::counting_iterator<std::uint32_t>> flags(
      indices, ActiveFlag{p.bin.data(), rule, static_cast<std::uint32_t>(n)});
  std::size_t scanBytes = 0, markBytes = 0, selectBytes = 0;
  BHVIZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scanBytes, flags, cw.activeBefore.data(),
                                                 items + 1, stream));
  BHVIZ_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, markBytes, cw.cellOf.data(),
                                                 cw.cellOf.data(), items, stream));
  const CoveredSlot isCovered{cw.cellOf.data()};
  BHVIZ_CUDA_CHECK(cub::DeviceSelect::If(nullptr, selectBytes, indices, cw.covered.data(),
                                         cw.selected.data(), items, isCovered, stream));
  cw.temp.reserve(std::max({scanBytes, markBytes, selectBytes}));
  std::size_t bytes = cw.temp.capacity();
  BHVIZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cw.temp.data(), bytes, flags,
                                                 cw.activeBefore.data(), items + 1, stream));

  // 2. The cover, each particle's covering cell.
  BHVIZ_CUDA_CHECK(cudaMemsetAsync(cw.cellOf.data(), 0, (n + 1) * sizeof(std::uint32_t), stream));
  const CoverCensus none{0, 0, kMaxLevel + 1};
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(cw.census.data(), &none, sizeof(CoverCensus),
                                   cudaMemcpyHostToDevice, stream));
  const CoverCells cells{tree.first.data(),  tree.count.data(),      tree.child.data(),
                         tree.parent.data(), tree.childCount.data(), tree.level.data()};
  const auto cellCount = static_cast<std::uint32_t>(tree.cells);
  coverKernel<<<blocksFor(cellCount), kBlock, 0, stream>>>(cellCount, cells, cw.activeBefore.data(),
                                                           static_cast<std::uint32_t>(n), share,
                                                           cw.cellOf.data(), cw.census.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  bytes = cw.temp.capacity();
  BHVIZ_CUDA_CHECK(cub::DeviceScan::InclusiveSum(cw.temp.data(), bytes, cw.cellOf.data(),
                                                 cw.cellOf.data(), items, stream));

  // 3. The covered slots, in order, and the census.
  bytes = cw.temp.capacity();
  BHVIZ_CUDA_CHECK(cub::DeviceSelect::If(cw.temp.data(), bytes, indices, cw.covered.data(),
                                         cw.selected.data(), items, isCovered, stream));
  CoverCensus census;  // the substep's wait, through pinned memory as every other
  std::memcpy(&census, readBack(cw.censusHost, cw.census.data(), sizeof census, stream),
              sizeof census);
  const std::uint32_t m = census.particles;
  if (m == 0) return census;

  // 4. New keys, one sort, and the particles written back in their new order.
  DeviceParticles& gathered = ws.scratch;
  gathered.resize(n);
  keysKernel<<<blocksFor(m), kBlock, 0, stream>>>(
      m, cw.covered.data(), cw.cellOf.data(), tree.first.data(), tree.level.data(), ws.keysData(),
      ws.frame.data(), curve, viewOf(p), carried, cw.keys[0].data(), cw.from[0].data(),
      spansOf(gathered), cw.carried.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  cub::DoubleBuffer<std::uint64_t> keys(cw.keys[0].data(), cw.keys[1].data());
  cub::DoubleBuffer<std::uint32_t> from(cw.from[0].data(), cw.from[1].data());
  // Stable, so that equal keys keep their order, as cpu::sortOrder does. Every covered key shares
  // the prefix of the smallest cell holding every target.
  const int endBit = 3 * (kMaxLevel - std::min<int>(census.commonLevel, kMaxLevel - 1));
  std::size_t sortBytes = 0;
  BHVIZ_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, keys, from,
                                                   static_cast<int>(m), 0, endBit, stream));
  cw.temp.reserve(sortBytes);
  sortBytes = cw.temp.capacity();
  BHVIZ_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cw.temp.data(), sortBytes, keys, from,
                                                   static_cast<int>(m), 0, endBit, stream));
  scatterKernel<<<blocksFor(m), kBlock, 0, stream>>>(
      m, cw.covered.data(), keys.Current(), from.Current(), viewOf(gathered), cw.carried.data(),
      ws.keys[ws.current].data(), spansOf(p), carried);
  BHVIZ_CUDA_CHECK_LAUNCH();
  return census;
}

}  // namespace bhviz::sim::cuda
