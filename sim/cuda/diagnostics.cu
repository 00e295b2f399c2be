// The diagnostics on the device, the twin of sim::computeDiagnostics: the conserved sums and the
// bin census reduced where the particles are, so only nine doubles and the census come back; and
// the check for non-finite particles, which names a few.
#include <algorithm>
#include <cub/block/block_reduce.cuh>
#include <vector>

#include "sim/common/conserved.h"
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"

namespace bhviz::sim::cuda {

namespace {

/// The conserved sums of all particles (block reduction in double, then one atomic add per value
/// and block) and the bin census: what sim::computeDiagnostics sums on the host, without the copy.
struct SumOp {
  __device__ ConservedSums operator()(ConservedSums a, const ConservedSums& b) const {
    add(a, b);
    return a;
  }
};

__global__ void conservedKernel(std::uint32_t n, std::uint64_t tick, int depth, double tickDt,
                                const Vec4* __restrict__ posMass, const Vec4* __restrict__ vel,
                                const Vec4* __restrict__ accPot,
                                const std::uint8_t* __restrict__ bin,
                                ConservedSums* __restrict__ sums,
                                unsigned long long* __restrict__ histogram) {
  using Reduce = cub::BlockReduce<ConservedSums, kBlock>;
  __shared__ typename Reduce::TempStorage temp;
  __shared__ unsigned int blockHistogram[kMaxBinDepthLimit + 1];
  if (threadIdx.x <= static_cast<unsigned>(depth)) blockHistogram[threadIdx.x] = 0;
  __syncthreads();
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  ConservedSums mine;
  if (i < n) {
    const int b = min(static_cast<int>(bin[i]), depth);
    atomicAdd(&blockHistogram[b], 1u);
    mine = conservedTerms(posMass[i], vel[i], accPot[i], b, tick, depth, tickDt);
  }
  const ConservedSums total = Reduce(temp).Reduce(mine, SumOp());
  __syncthreads();
  if (threadIdx.x <= static_cast<unsigned>(depth) && blockHistogram[threadIdx.x] > 0) {
    atomicAdd(&histogram[threadIdx.x],
              static_cast<unsigned long long>(blockHistogram[threadIdx.x]));
  }
  if (threadIdx.x == 0) {
    double* out = &sums->mass;  // ConservedSums is nine doubles in a row
    const double* in = &total.mass;
    for (int k = 0; k < 9; ++k) atomicAdd(out + k, in[k]);
  }
}

/// Up to `max` ids per tier (0: position, 1: velocity, 2: force) of non-finite particles.
__global__ void nonFiniteKernel(std::uint32_t n, const Vec4* __restrict__ posMass,
                                const Vec4* __restrict__ vel, const Vec4* __restrict__ accPot,
                                const std::uint32_t* __restrict__ id, std::uint32_t max,
                                std::uint32_t* __restrict__ counts,
                                std::uint32_t* __restrict__ ids) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int tier = !allFinite(posMass[i])  ? 0
                   : !allFinite(vel[i])    ? 1
                   : !allFinite(accPot[i]) ? 2
                                           : -1;
  if (tier < 0) return;
  const std::uint32_t slot = atomicAdd(&counts[tier], 1u);
  if (slot < max) ids[tier * max + slot] = id[i];
}

}  // namespace

Diagnostics computeDiagnostics(const DeviceParticles& p, const Clock& clock,
                               DeviceBuffer<ConservedSums>& d_sums,
                               DeviceBuffer<unsigned long long>& d_histogram, Stream stream) {
  static_assert(sizeof(ConservedSums) == 9 * sizeof(double), "nine doubles in a row");
  const int bins = clock.depth + 1;
  d_sums.reserve(1);
  d_histogram.reserve(static_cast<std::size_t>(bins));
  BHVIZ_CUDA_CHECK(cudaMemsetAsync(d_sums.data(), 0, sizeof(ConservedSums), stream));
  BHVIZ_CUDA_CHECK(
      cudaMemsetAsync(d_histogram.data(), 0, bins * sizeof(unsigned long long), stream));
  if (p.n > 0) {
    conservedKernel<<<blocksFor(p.n), kBlock, 0, stream>>>(
        static_cast<std::uint32_t>(p.n), clock.tick, clock.depth, clock.tickDt(), p.posMass.data(),
        p.vel.data(), p.accPot.data(), p.bin.data(), d_sums.data(), d_histogram.data());
    BHVIZ_CUDA_CHECK_LAUNCH();
  }
  ConservedSums sums;
  std::vector<unsigned long long> h(static_cast<std::size_t>(bins));
  copyToHost(&sums, d_sums.data(), sizeof(sums));
  copyToHost(h.data(), d_histogram.data(), h.size() * sizeof(unsigned long long));
  return diagnosticsFromSums(sums, std::vector<std::uint64_t>(h.begin(), h.end()), clock);
}

std::vector<std::uint32_t> findNonFinite(const DeviceParticles& p, std::size_t max,
                                         DeviceBuffer<std::uint32_t>& counts,
                                         DeviceBuffer<std::uint32_t>& ids, Stream stream) {
  if (max == 0 || p.n == 0) return {};
  const auto cap = static_cast<std::uint32_t>(max);
  counts.reserve(3);
  ids.reserve(3 * max);
  BHVIZ_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, 3 * sizeof(std::uint32_t), stream));
  nonFiniteKernel<<<blocksFor(p.n), kBlock, 0, stream>>>(
      static_cast<std::uint32_t>(p.n), p.posMass.data(), p.vel.data(), p.accPot.data(), p.id.data(),
      cap, counts.data(), ids.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  std::uint32_t h_counts[3];
  copyToHost(h_counts, counts.data(), sizeof(h_counts));
  // Positions, then velocities, then forces: the first tier with a bad particle names it.
  for (int tier = 0; tier < 3; ++tier) {
    if (h_counts[tier] == 0) continue;
    std::vector<std::uint32_t> out(std::min<std::uint32_t>(h_counts[tier], cap));
    copyToHost(out.data(), ids.data() + tier * max, out.size() * sizeof(std::uint32_t));
    std::sort(out.begin(), out.end());  // atomics append in no particular order
    return out;
  }
  return {};
}

}  // namespace bhviz::sim::cuda
