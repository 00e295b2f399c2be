// The ORB's counts on the device (domains.h; the particle exchange is in exchange.cu).
//
// One counting kernel does both counts: each splitting domain's weight below its cut (a counter
// per domain, BelowCut) and each domain's weight per interval of its grid (a counter per
// interval, GridInterval). It adds in shared memory where the counters fit (one 64-bit counter
// each; global atomics beyond), then adds the block's sums to the result. The
// particles are in key order, so a warp's 32 mostly lie in one interval (all of them, in a
// second round, below or above the one interval it refines): a warp whose lanes share a counter
// adds their sum once. Integer sums: every order gives the CPU twin's numbers exactly.
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cub/device/device_reduce.cuh>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/domains.h"

namespace bhviz::sim::cuda {

namespace {

/// Counters a block adds in shared memory (48 KiB, the default limit); beyond, in global
/// memory.
constexpr int kSharedEntries = 6144;
/// Blocks of the counting kernels: each strides over the particles.
constexpr unsigned kCountBlocks = 1024;

__device__ __forceinline__ float coordinate(const Vec4& p, int axis) {
  return axis == 0 ? p.x : axis == 1 ? p.y : p.z;
}

/// Adds each lane's `w` to counter `slot` of `counters` (slot < 0: none, and w must be 0). Where
/// every lane of the warp has the same slot, their sum is added once. The whole warp must call.
__device__ __forceinline__ void addByWarp(unsigned long long* counters, int slot,
                                          unsigned long long w) {
  const int first = __shfl_sync(0xffffffffu, slot, 0);
  if (__all_sync(0xffffffffu, slot == first)) {
    for (int offset = 16; offset > 0; offset >>= 1) w += __shfl_down_sync(0xffffffffu, w, offset);
    if ((threadIdx.x & 31u) == 0 && first >= 0) atomicAdd(&counters[first], w);
  } else if (slot >= 0) {
    atomicAdd(&counters[slot], w);
  }
}

/// The counter of particle i when weighing below the cuts: its domain where it lies below its
/// domain's cut, else none (-1).
struct BelowCut {
  const Vec4* posMass;
  const int* domain;
  const OrbCut* cuts;
  __device__ int operator()(std::uint32_t i) const {
    const int d = domain[i];
    const OrbCut c = cuts[d];
    return c.axis >= 0 && !orbHigh(c, xyz(posMass[i])) ? d : -1;
  }
};

/// The counter of particle i in a round's histogram: its interval of its domain's grid (the
/// entry past the one below the grid), else none (-1).
struct GridInterval {
  const Vec4* posMass;
  const int* domain;
  const OrbGrid* grids;
  __device__ int operator()(std::uint32_t i) const {
    const OrbGrid g = grids[domain[i]];
    return g.axis >= 0 ? g.offset + orbBin(coordinate(posMass[i], g.axis), g) + 1 : -1;
  }
};

/// Adds each particle's weight to its counter (slotOf), of `counters` in `out`; with kShared
/// (counters ≤ kSharedEntries) a block counts in its dynamic shared memory first.
template <bool kShared, typename SlotOf>
__global__ void countKernel(std::uint32_t n, SlotOf slotOf, const std::uint32_t* __restrict__ work,
                            const std::uint8_t* __restrict__ bin, int counters,
                            unsigned long long* __restrict__ out) {
  extern __shared__ unsigned long long local[];
  if (kShared) {
    for (int k = threadIdx.x; k < counters; k += blockDim.x) local[k] = 0;
    __syncthreads();
  }
  // Whole warps go round together (the block's first index is a multiple of 32).
  for (std::uint32_t base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
    const std::uint32_t i = base + threadIdx.x;
    const int slot = i < n ? slotOf(i) : -1;
    const unsigned long long w = slot < 0          ? 0ull
                                 : work != nullptr ? orbWeight(work[i], bin[i])
                                                   : 1ull;
    addByWarp(kShared ? local : out, slot, w);
  }
  if (kShared) {
    __syncthreads();
    for (int k = threadIdx.x; k < counters; k += blockDim.x) {
      if (local[k] != 0) atomicAdd(&out[k], local[k]);
    }
  }
}

__global__ void splitKernel(std::uint32_t n, const Vec4* __restrict__ posMass,
                            int* __restrict__ domain, const OrbCut* __restrict__ cuts) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const OrbCut c = cuts[domain[i]];
  if (c.axis >= 0 && orbHigh(c, xyz(posMass[i]))) domain[i] = c.high;
}

class DeviceOrbParticles final : public OrbParticles {
 public:
  DeviceOrbParticles(const Vec4* posMass, const std::uint32_t* work, const std::uint8_t* bin,
                     std::size_t n, Stream stream)
      : m_posMass(posMass), m_work(work), m_bin(bin), m_n(n), m_stream(stream) {
    m_domain.reserve(std::max<std::size_t>(n, 1));
    BHVIZ_CUDA_CHECK(cudaMemsetAsync(m_domain.data(), 0, n * sizeof(int), stream));
  }

  void weighBelow(const std::vector<OrbCut>& cuts,
                  std::vector<std::uint64_t>& below) const override {
    const int domains = static_cast<int>(cuts.size());
    upload(cuts);
    m_below.reserve(cuts.size());
    BHVIZ_CUDA_CHECK(cudaMemsetAsync(m_below.data(), 0, cuts.size() * 8, m_stream));
    count(BelowCut{m_posMass, m_domain.data(), m_cuts.data()}, domains, m_below.data());
    std::vector<unsigned long long> sums(cuts.size());
    copyToHost(sums.data(), m_below.data(), cuts.size() * 8);
    for (std::size_t d = 0; d < cuts.size(); ++d) {
      if (cuts[d].axis >= 0) below[d] = sums[d];
    }
  }

  void histogram(const std::vector<OrbGrid>& grids,
                 std::vector<std::uint64_t>& hist) const override {
    m_grids.reserve(std::max<std::size_t>(grids.size(), 1));
    copyToDevice(m_grids.data(), grids.data(), grids.size() * sizeof(OrbGrid));
    m_hist.reserve(std::max<std::size_t>(hist.size(), 1));
    BHVIZ_CUDA_CHECK(cudaMemsetAsync(m_hist.data(), 0, hist.size() * 8, m_stream));
    count(GridInterval{m_posMass, m_domain.data(), m_grids.data()}, static_cast<int>(hist.size()),
          m_hist.data());
    std::vector<unsigned long long> sums(hist.size());
    copyToHost(sums.data(), m_hist.data(), hist.size() * 8);
    for (std::size_t k = 0; k < hist.size(); ++k) hist[k] += sums[k];
  }

  void split(const std::vector<OrbCut>& cuts) override {
    upload(cuts);
    if (m_n == 0) return;
    splitKernel<<<blocksFor(m_n), kBlock, 0, m_stream>>>(static_cast<std::uint32_t>(m_n), m_posMass,
                                                         m_domain.data(), m_cuts.data());
    BHVIZ_CUDA_CHECK_LAUNCH();
  }

  void leavers(int rank, std::vector<std::uint32_t>& index,
               std::vector<int>& domain) const override {
    // Selected on the device: only the leavers' indices and domains come to the host.
    selectLeavers(m_domain.data(), m_n, rank, m_leavers, m_stream, index, domain);
  }

  std::vector<int> domains() const override {
    std::vector<int> out(m_n);
    if (m_n > 0) copyToHost(out.data(), m_domain.data(), m_n * sizeof(int));
    return out;
  }

 private:
  /// Adds every particle's weight to its counter (countKernel), `counters` of them in `out`.
  template <typename SlotOf>
  void count(SlotOf slotOf, int counters, unsigned long long* out) const {
    if (m_n == 0) return;
    const unsigned blocks = std::min(blocksFor(m_n), kCountBlocks);
    const auto n = static_cast<std::uint32_t>(m_n);
    if (counters <= kSharedEntries) {
      countKernel<true><<<blocks, kBlock, counters * sizeof(unsigned long long), m_stream>>>(
          n, slotOf, m_work, m_bin, counters, out);
    } else {
      countKernel<false><<<blocks, kBlock, 0, m_stream>>>(n, slotOf, m_work, m_bin, counters, out);
    }
    BHVIZ_CUDA_CHECK_LAUNCH();
  }

  void upload(const std::vector<OrbCut>& cuts) const {
    m_cuts.reserve(cuts.size());
    copyToDevice(m_cuts.data(), cuts.data(), cuts.size() * sizeof(OrbCut));
  }

  const Vec4* m_posMass;
  const std::uint32_t* m_work;
  const std::uint8_t* m_bin;
  std::size_t m_n;
  Stream m_stream;
  DeviceBuffer<int> m_domain;
  mutable DeviceBuffer<OrbCut> m_cuts;
  mutable DeviceBuffer<unsigned long long> m_below;
  mutable DeviceBuffer<OrbGrid> m_grids;
  mutable LeaverScratch m_leavers;
  mutable DeviceBuffer<unsigned long long> m_hist;
};

struct Widen {
  __host__ __device__ unsigned long long operator()(std::uint32_t w) const { return w; }
};

}  // namespace

std::unique_ptr<OrbParticles> makeDeviceOrbParticles(const Vec4* posMass, const std::uint32_t* work,
                                                     const std::uint8_t* bin, std::size_t n,
                                                     Stream stream) {
  return std::make_unique<DeviceOrbParticles>(posMass, work, bin, n, stream);
}

std::uint64_t sumWork(const std::uint32_t* work, std::size_t n, DeviceBuffer<unsigned char>& temp,
                      DeviceBuffer<unsigned long long>& total, Stream stream) {
  if (n == 0) return 0;
  const auto wide = thrust::make_transform_iterator(work, Widen{});
  total.reserve(1);
  std::size_t bytes = 0;
  BHVIZ_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, wide, total.data(), n, stream));
  temp.reserve(std::max<std::size_t>(bytes, 1));
  BHVIZ_CUDA_CHECK(cub::DeviceReduce::Sum(temp.data(), bytes, wide, total.data(), n, stream));
  unsigned long long sum = 0;
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(&sum, total.data(), sizeof sum, cudaMemcpyDeviceToHost, stream));
  synchronize(stream);
  return sum;
}

}  // namespace bhviz::sim::cuda
