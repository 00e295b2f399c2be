// The tree statistics on the device (tree_statistics.h). Each block keeps its histograms in
// shared memory and adds the non-zero bins to the device record once; lanes of a warp that fall
// into one bin add together (__match_any_sync), since most targets share a few interaction bins
// and most leaves a few levels.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/tree_statistics.h"

namespace bhviz::sim::cuda {

namespace {

constexpr unsigned kFull = 0xffffffffu;
/// Blocks of the grid-stride loops: enough to fill a GPU, few enough that the record's global
/// atomics (one per non-zero bin and block) stay negligible.
constexpr unsigned kMaxBlocks = 512;

unsigned blocksUpTo(std::size_t n) { return n == 0 ? 1u : std::min(blocksFor(n), kMaxBlocks); }

/// Adds one to bins[b] for each lane of the warp with that b (b < 0: none). Every lane calls it.
__device__ void addToBin(unsigned int* bins, int b, unsigned lane) {
  const unsigned peers = __match_any_sync(kFull, b);
  if (b >= 0 && lane == static_cast<unsigned>(__ffs(peers) - 1)) atomicAdd(&bins[b], __popc(peers));
}

/// Adds the non-zero entries of a block's bins to the device record's.
__device__ void flushBins(const unsigned int* bins, int count, unsigned long long* out) {
  for (int k = threadIdx.x; k < count; k += blockDim.x) {
    if (bins[k] > 0) atomicAdd(&out[k], static_cast<unsigned long long>(bins[k]));
  }
}

/// Leaves per level and by occupancy, one cell per thread (grid-stride, warps in step).
__global__ void leafStatisticsKernel(std::uint32_t cells, const std::uint32_t* __restrict__ count,
                                     const std::uint8_t* __restrict__ childCount,
                                     const std::uint8_t* __restrict__ level, int leafSize,
                                     TreeStatisticsSums* __restrict__ out) {
  __shared__ unsigned int perLevel[kTreeLevels];
  __shared__ unsigned int occupancy[kOccupancyBins];
  __shared__ unsigned long long overfull;
  const int bins = leafSize + 2;
  for (int k = threadIdx.x; k < bins; k += blockDim.x) occupancy[k] = 0;
  for (int k = threadIdx.x; k < kTreeLevels; k += blockDim.x) perLevel[k] = 0;
  if (threadIdx.x == 0) overfull = 0;
  __syncthreads();
  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t stride = gridDim.x * blockDim.x;
  for (std::uint32_t w = blockIdx.x * blockDim.x + threadIdx.x - lane; w < cells; w += stride) {
    const std::uint32_t c = w + lane;
    const bool leaf = c < cells && childCount[c] == 0;
    const std::uint32_t n = leaf ? count[c] : 0;
    addToBin(perLevel, leaf ? int(level[c]) : -1, lane);
    const int bin = leaf ? occupancyBin(n, leafSize) : -1;
    if (bin >= 0) atomicAdd(&occupancy[bin], 1u);  // spread over N_leaf bins: few collisions
    if (bin > leafSize) atomicAdd(&overfull, static_cast<unsigned long long>(n));
  }
  __syncthreads();
  flushBins(perLevel, kTreeLevels, out->leavesPerLevel);
  flushBins(occupancy, bins, out->leavesByOccupancy);
  if (threadIdx.x == 0 && overfull > 0) atomicAdd(&out->overfullParticles, overfull);
}

/// The targets' interactions: the log2 histogram, their sum and extremes.
__global__ void workStatisticsKernel(std::uint32_t n, const std::uint8_t* __restrict__ bin,
                                     const std::uint32_t* __restrict__ work, ActiveRule rule,
                                     TreeStatisticsSums* __restrict__ out) {
  __shared__ unsigned int histogram[kInteractionBins];
  __shared__ unsigned long long total, targets;
  __shared__ unsigned int blockMinInv, blockMax;
  for (int k = threadIdx.x; k < kInteractionBins; k += blockDim.x) histogram[k] = 0;
  if (threadIdx.x == 0) {
    total = targets = 0;
    blockMinInv = blockMax = 0;
  }
  __syncthreads();
  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t stride = gridDim.x * blockDim.x;
  unsigned long long mySum = 0, myTargets = 0;
  unsigned int myMinInv = 0, myMax = 0;
  for (std::uint32_t w = blockIdx.x * blockDim.x + threadIdx.x - lane; w < n; w += stride) {
    const std::uint32_t i = w + lane;
    const bool target = i < n && isTarget(rule, bin[i]);
    const std::uint32_t v = target ? work[i] : 0u;
    addToBin(histogram, target ? interactionBin(v) : -1, lane);
    if (target) {
      mySum += v;
      ++myTargets;
      myMinInv = ::max(myMinInv, ~v);
      myMax = ::max(myMax, v);
    }
  }
  for (int o = 16; o > 0; o /= 2) {
    mySum += __shfl_down_sync(kFull, mySum, o);
    myTargets += __shfl_down_sync(kFull, myTargets, o);
    myMinInv = ::max(myMinInv, __shfl_down_sync(kFull, myMinInv, o));
    myMax = ::max(myMax, __shfl_down_sync(kFull, myMax, o));
  }
  if (lane == 0 && myTargets > 0) {
    atomicAdd(&total, mySum);
    atomicAdd(&targets, myTargets);
    atomicMax(&blockMinInv, myMinInv);
    atomicMax(&blockMax, myMax);
  }
  __syncthreads();
  flushBins(histogram, kInteractionBins, out->interactionsLog2);
  if (threadIdx.x == 0 && targets > 0) {
    atomicAdd(&out->interactions, total);
    atomicAdd(&out->targets, targets);
    atomicMax(&out->minInteractionsInv, blockMinInv);
    atomicMax(&out->maxInteractions, blockMax);
  }
}

}  // namespace

TreeStatistics computeTreeStatistics(const TreeStatisticsSource& src,
                                     DeviceBuffer<TreeStatisticsSums>& d_sums, Stream stream) {
  TreeStatistics s;
  const DeviceTree& tree = *src.tree;
  if (tree.levelBegin.size() < 2 || tree.cells == 0) return s;
  if (src.leafSize < 1 || src.leafSize > kMaxLeafSize) {
    throw std::invalid_argument("computeTreeStatistics: N_leaf " + std::to_string(src.leafSize) +
                                ", supported 1.." + std::to_string(kMaxLeafSize));
  }
  d_sums.reserve(1);
  BHVIZ_CUDA_CHECK(cudaMemsetAsync(d_sums.data(), 0, sizeof(TreeStatisticsSums), stream));
  const auto cells = static_cast<std::uint32_t>(tree.cells);
  leafStatisticsKernel<<<blocksUpTo(cells), kBlock, 0, stream>>>(
      cells, tree.count.data(), tree.childCount.data(), tree.level.data(), src.leafSize,
      d_sums.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  const auto n = static_cast<std::uint32_t>(src.p->n);
  if (src.work != nullptr && n > 0) {
    workStatisticsKernel<<<blocksUpTo(n), kBlock, 0, stream>>>(n, src.p->bin.data(), src.work,
                                                               src.rule, d_sums.data());
    BHVIZ_CUDA_CHECK_LAUNCH();
  }
  BHVIZ_CUDA_CHECK(cudaStreamSynchronize(stream));
  TreeStatisticsSums h;
  copyToHost(&h, d_sums.data(), sizeof(h));

  s.particles = src.p->n;
  s.cells = tree.cells;
  s.groups = src.groups;
  s.levels = static_cast<int>(tree.levelBegin.size()) - 1;
  s.leafSize = src.leafSize;
  for (int l = 0; l < s.levels && l < kTreeLevels; ++l) {
    s.cellsPerLevel[l] = tree.levelBegin[l + 1] - tree.levelBegin[l];
  }
  for (int l = 0; l < kTreeLevels; ++l) {
    s.leavesPerLevel[l] = h.leavesPerLevel[l];
    s.leaves += h.leavesPerLevel[l];
  }
  for (int k = 0; k < kOccupancyBins; ++k) s.leavesByOccupancy[k] = h.leavesByOccupancy[k];
  s.overfullParticles = h.overfullParticles;
  s.targets = h.targets;
  for (int b = 0; b < kInteractionBins; ++b) s.interactionsLog2[b] = h.interactionsLog2[b];
  s.interactions = h.interactions;
  s.minInteractions = h.targets > 0 ? ~h.minInteractionsInv : 0u;
  s.maxInteractions = h.maxInteractions;
  return s;
}

}  // namespace bhviz::sim::cuda
