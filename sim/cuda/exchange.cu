// The particle exchange's device half (domains.h): the leavers selected, packed by destination
// and placed where they arrive, and the selections that bring only some particles to the host.
// The exchange touches only the particles that move (planExchange): the staying ones beyond the
// new end move down into the holes, the arrivals fill the rest; at 16 M particles a rank,
// compacting every array had cost ~1 ms for a few hundred strays.
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <stdexcept>
#include <string>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/domains.h"
#include "sim/cuda/particle_view.cuh"

namespace bhviz::sim::cuda {

namespace {

/// The particles of other domains than one.
struct Leaves {
  const int* domain;
  int rank;
  __host__ __device__ bool operator()(std::uint32_t i) const { return domain[i] != rank; }
};

__global__ void domainsOfKernel(std::uint32_t m, const std::uint32_t* __restrict__ index,
                                const int* __restrict__ domain, int* __restrict__ out) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < m) out[k] = domain[index[k]];
}

/// The indices of the particles whose domain is not `rank` into s.index, ascending, and their
/// number at `selected` (device memory): queued, no wait.
void selectOnDevice(const int* domainOf, std::size_t n, int rank, LeaverScratch& s, int* selected,
                    Stream stream) {
  const thrust::counting_iterator<std::uint32_t> all(0);
  const Leaves leaves{domainOf, rank};
  s.index.reserve(n);
  std::size_t bytes = 0;
  const int count = static_cast<int>(n);
  BHVIZ_CUDA_CHECK(
      cub::DeviceSelect::If(nullptr, bytes, all, s.index.data(), selected, count, leaves, stream));
  s.temp.reserve(std::max<std::size_t>(bytes, 1));
  BHVIZ_CUDA_CHECK(cub::DeviceSelect::If(s.temp.data(), bytes, all, s.index.data(), selected, count,
                                         leaves, stream));
}

/// Device to host on `stream`, waiting for it.
void downloadOn(void* host, const void* device, std::size_t bytes, Stream stream) {
  if (bytes == 0) return;
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
  synchronize(stream);
}

}  // namespace

void selectLeavers(const int* domainOf, std::size_t n, int rank, LeaverScratch& s, Stream stream,
                   std::vector<std::uint32_t>& index, std::vector<int>& domain) {
  index.clear();
  domain.clear();
  if (n == 0) return;
  s.count.reserve(1);
  selectOnDevice(domainOf, n, rank, s, s.count.data(), stream);
  int m = 0;
  downloadOn(&m, s.count.data(), sizeof m, stream);
  if (m == 0) return;
  const auto mu = static_cast<std::uint32_t>(m);
  s.domain.reserve(mu);
  domainsOfKernel<<<blocksFor(mu), kBlock, 0, stream>>>(mu, s.index.data(), domainOf,
                                                        s.domain.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  index.resize(mu);
  domain.resize(mu);
  downloadOn(index.data(), s.index.data(), mu * sizeof(std::uint32_t), stream);
  downloadOn(domain.data(), s.domain.data(), mu * sizeof(int), stream);
}

namespace {

/// Copies particle index[k] of `from` into slot k of `to`.
__global__ void gatherKernel(std::uint32_t m, const std::uint32_t* __restrict__ index,
                             ParticleView from, ParticleSpans to) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < m) copyParticle(from, index[k], to, k);
}

/// Per-particle counts that travel with the particles (the measured work): a moved particle
/// takes its own, an arrival gets 0.
struct CarriedCounts {
  std::uint32_t* array[std::tuple_size_v<CarriedArrays>] = {};
  int count = 0;
};

/// Moves staying particle from[k] down into slot to[k] (planExchange: no slot is both).
__global__ void moveKernel(std::uint32_t m, const std::uint32_t* __restrict__ from,
                           const std::uint32_t* __restrict__ to, ParticleSpans p,
                           CarriedCounts carried) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  const std::uint32_t i = from[k], j = to[k];
  copyParticle(p, i, p, j);
  for (int a = 0; a < carried.count; ++a) carried.array[a][j] = carried.array[a][i];
}

/// Writes arrival k (packed, in device memory) into slot at[k].
__global__ void placeKernel(std::uint32_t m, const std::uint32_t* __restrict__ at,
                            const PackedParticle* __restrict__ arriving, ParticleSpans p,
                            CarriedCounts carried) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  const std::uint32_t j = at[k];
  placeAt(p, j, arriving[k]);
  for (int a = 0; a < carried.count; ++a) carried.array[a][j] = 0;
}

/// Packs particle order[k] into out[k].
__global__ void packKernel(std::uint32_t m, const std::uint32_t* __restrict__ order, ParticleView p,
                           PackedParticle* __restrict__ out) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  out[k] = packedAt(p, order[k]);
}

/// counts[d] += the selected particles (index[0..*selected)) of domain d. A warp's lanes of
/// one domain add once: a decomposition may send millions, most to one rank.
__global__ void countByDomainKernel(const int* __restrict__ selected,
                                    const std::uint32_t* __restrict__ index,
                                    const int* __restrict__ domainOf, int* __restrict__ counts) {
  const int m = *selected;
  // Whole blocks take the same turns, so that every lane of a warp meets the match.
  for (int base = blockIdx.x * blockDim.x; base < m; base += gridDim.x * blockDim.x) {
    const int k = base + static_cast<int>(threadIdx.x);
    const int d = k < m ? domainOf[index[k]] : -1;
    const unsigned peers = __match_any_sync(0xffffffffu, d);
    if (d >= 0 && static_cast<int>(threadIdx.x % 32) == __ffs(peers) - 1) {
      atomicAdd(&counts[d], __popc(peers));
    }
  }
}

std::size_t minCapacity(const DeviceParticles& p) {
  return std::min({p.posMass.capacity(), p.vel.capacity(), p.accPot.capacity(), p.id.capacity(),
                   p.tag.capacity(), p.bin.capacity()});
}

/// Grows `a` to hold `size` entries keeping its first n, through `spare`.
void growKeeping(DeviceBuffer<std::uint32_t>& a, std::size_t n, std::size_t size,
                 DeviceBuffer<std::uint32_t>& spare, Stream stream) {
  spare.reserve(std::max(size, a.capacity() + a.capacity() / 2));
  copyOnDevice(spare.data(), a.data(), n * sizeof(std::uint32_t), stream);
  synchronize(stream);  // the old buffer, now `spare`, may be freed by its next growth
  a.swap(spare);
}

/// Indices on the device, checked against n.
void uploadIndices(const std::vector<std::uint32_t>& indices, std::size_t n,
                   DeviceBuffer<std::uint32_t>& d) {
  for (std::uint32_t i : indices) {
    if (i >= n)
      throw std::out_of_range("particle index " + std::to_string(i) + " of " + std::to_string(n));
  }
  d.reserve(std::max<std::size_t>(indices.size(), 1));
  copyToDevice(d.data(), indices.data(), indices.size() * sizeof(std::uint32_t));
}

}  // namespace

Particles gatherParticles(const DeviceParticles& p, const std::vector<std::uint32_t>& indices,
                          ExchangeScratch& scratch, Stream stream) {
  Particles out;
  if (indices.empty()) return out;
  uploadIndices(indices, p.n, scratch.index);
  const std::size_t m = indices.size();
  DeviceParticles& q = scratch.moving;
  q.resize(m);
  gatherKernel<<<blocksFor(m), kBlock, 0, stream>>>(static_cast<std::uint32_t>(m),
                                                    scratch.index.data(), viewOf(p), spansOf(q));
  BHVIZ_CUDA_CHECK_LAUNCH();
  downloadParticles(q, out);
  return out;
}

namespace {

struct IdMultiple {
  const std::uint32_t* id;
  std::uint32_t stride;
  __device__ bool operator()(std::uint32_t i) const { return id[i] % stride == 0; }
};

}  // namespace

void sampleById(const DeviceParticles& p, std::uint32_t stride, SampleScratch& scratch,
                Stream stream, Particles& out) {
  if (stride <= 1 || p.n == 0) {
    downloadParticles(p, out);
    return;
  }
  // Selected on the device: only the sample's particles come to the host.
  const thrust::counting_iterator<std::uint32_t> all(0);
  const IdMultiple multiple{p.id.data(), stride};
  scratch.index.reserve(p.n);
  scratch.count.reserve(1);
  std::size_t bytes = 0;
  const int n = static_cast<int>(p.n);
  BHVIZ_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, all, scratch.index.data(),
                                         scratch.count.data(), n, multiple, stream));
  scratch.temp.reserve(std::max<std::size_t>(bytes, 1));
  BHVIZ_CUDA_CHECK(cub::DeviceSelect::If(scratch.temp.data(), bytes, all, scratch.index.data(),
                                         scratch.count.data(), n, multiple, stream));
  int count = 0;
  copyToHost(&count, scratch.count.data(), sizeof count);
  if (count == 0) {
    out.resize(0);
    return;
  }
  const auto m = static_cast<std::uint32_t>(count);
  DeviceParticles& q = scratch.particles;
  q.resize(m);
  gatherKernel<<<blocksFor(m), kBlock, 0, stream>>>(m, scratch.index.data(), viewOf(p), spansOf(q));
  BHVIZ_CUDA_CHECK_LAUNCH();
  downloadParticles(q, out);
}

namespace {

__global__ void domainOfKernel(std::uint32_t n, const Vec4* __restrict__ posMass,
                               const OrbCut* __restrict__ cut, int levels, int ranks,
                               int* __restrict__ domain) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) domain[i] = orbDomainOf(cut, levels, ranks, xyz(posMass[i]));
}

/// Each particle's domain under `cuts` into s.domain: queued, no wait.
void classify(const Vec4* posMass, std::size_t n, const OrbCuts& cuts, ExchangeScratch& s,
              Stream stream) {
  s.cuts.reserve(cuts.cut.size());
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(s.cuts.data(), cuts.cut.data(), cuts.cut.size() * sizeof(OrbCut),
                                   cudaMemcpyHostToDevice, stream));
  s.domain.reserve(n);
  domainOfKernel<<<blocksFor(n), kBlock, 0, stream>>>(static_cast<std::uint32_t>(n), posMass,
                                                      s.cuts.data(), cuts.levels(), cuts.ranks,
                                                      s.domain.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
}

/// Bits that hold every value below `ranks`.
int bitsBelow(int ranks) {
  int bits = 1;
  while ((1 << bits) < ranks) ++bits;
  return bits;
}

}  // namespace

void findStrays(const Vec4* posMass, std::size_t n, const OrbCuts& cuts, int rank,
                ExchangeScratch& scratch, Stream stream, std::vector<std::uint32_t>& index,
                std::vector<int>& domain) {
  index.clear();
  domain.clear();
  if (n == 0 || cuts.levels() == 0) return;
  classify(posMass, n, cuts, scratch, stream);
  selectLeavers(scratch.domain.data(), n, rank, scratch.leavers, stream, index, domain);
}

std::vector<int> packLeavers(const DeviceParticles& p, const OrbCuts& cuts, int rank,
                             ExchangeScratch& s, DeviceBuffer<PackedParticle>& out,
                             std::vector<std::uint32_t>& leaving, Stream stream) {
  const auto ranks = static_cast<std::size_t>(cuts.ranks);
  std::vector<int> counts(ranks + 1, 0);
  leaving.clear();
  if (p.n == 0 || cuts.levels() == 0) {
    counts.pop_back();
    return counts;
  }
  classify(p.posMass.data(), p.n, cuts, s, stream);
  // How many go to each domain, and after them how many in all: one download.
  LeaverScratch& l = s.leavers;
  l.count.reserve(ranks + 1);
  BHVIZ_CUDA_CHECK(cudaMemsetAsync(l.count.data(), 0, (ranks + 1) * sizeof(int), stream));
  selectOnDevice(s.domain.data(), p.n, rank, l, l.count.data() + ranks, stream);
  countByDomainKernel<<<std::min(blocksFor(p.n), 256u), kBlock, 0, stream>>>(
      l.count.data() + ranks, l.index.data(), s.domain.data(), l.count.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  downloadOn(counts.data(), l.count.data(), counts.size() * sizeof(int), stream);
  const auto m = static_cast<std::uint32_t>(counts.back());
  counts.pop_back();
  if (m == 0) return counts;
  // Grouped by domain where they go to several: a stable sort of the indices by domain.
  const std::uint32_t* order = l.index.data();
  if (std::count_if(counts.begin(), counts.end(), [](int c) { return c > 0; }) > 1) {
    l.domain.reserve(m);
    domainsOfKernel<<<blocksFor(m), kBlock, 0, stream>>>(m, l.index.data(), s.domain.data(),
                                                         l.domain.data());
    BHVIZ_CUDA_CHECK_LAUNCH();
    s.sortedDomain.reserve(m);
    s.sortedIndex.reserve(m);
    const int bits = bitsBelow(cuts.ranks);
    std::size_t bytes = 0;
    BHVIZ_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, bytes, l.domain.data(), s.sortedDomain.data(), l.index.data(),
        s.sortedIndex.data(), static_cast<int>(m), 0, bits, stream));
    l.temp.reserve(std::max<std::size_t>(bytes, 1));
    BHVIZ_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        l.temp.data(), bytes, l.domain.data(), s.sortedDomain.data(), l.index.data(),
        s.sortedIndex.data(), static_cast<int>(m), 0, bits, stream));
    order = s.sortedIndex.data();
  }
  out.reserve(m);
  packKernel<<<blocksFor(m), kBlock, 0, stream>>>(m, order, viewOf(p), out.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  leaving.resize(m);
  downloadOn(leaving.data(), l.index.data(), m * sizeof(std::uint32_t), stream);
  return counts;
}

void removeAndAppend(DeviceParticles& p, const std::vector<std::uint32_t>& leaving,
                     const Particles& arriving, BuildWorkspace& ws, ExchangeScratch& scratch,
                     Stream stream, CarriedArrays carried) {
  const std::vector<PackedParticle> packed = packAll(arriving);
  scratch.arriving.reserve(std::max<std::size_t>(packed.size(), 1));
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(scratch.arriving.data(), packed.data(),
                                   packed.size() * sizeof(PackedParticle), cudaMemcpyHostToDevice,
                                   stream));
  removeAndPlace(p, leaving, scratch.arriving.data(), packed.size(), ws, scratch, stream, carried);
  synchronize(stream);  // `packed`, pageable, is read by the copy
}

void removeAndPlace(DeviceParticles& p, const std::vector<std::uint32_t>& leaving,
                    const PackedParticle* arriving, std::size_t count, BuildWorkspace& ws,
                    ExchangeScratch& scratch, Stream stream, CarriedArrays carried) {
  const std::size_t n = p.n;
  const ExchangePlan plan = planExchange(n, leaving, count);
  const std::size_t size = plan.size;
  CarriedCounts counts;
  for (DeviceBuffer<std::uint32_t>* a : carried) {
    if (a == nullptr) continue;
    if (a->capacity() < size) growKeeping(*a, n, size, scratch.carry, stream);
    counts.array[counts.count++] = a->data();
  }
  if (minCapacity(p) < size) {
    // Grown keeping the n particles (DeviceBuffer's growth discards): rare, growth is geometric.
    DeviceParticles& grown = ws.scratch;
    grown.resize(size);
    copyParticles(p, grown, stream);  // its n of them
    synchronize(stream);              // the old arrays, now ws.scratch, are grown (freed) below
    p.swap(grown);
  }
  // One upload of the indices: from, to, then the arrivals' slots.
  const std::size_t moves = plan.from.size(), arrivals = plan.arrivalAt.size();
  std::vector<std::uint32_t> indices;
  indices.reserve(2 * moves + arrivals);
  indices.insert(indices.end(), plan.from.begin(), plan.from.end());
  indices.insert(indices.end(), plan.to.begin(), plan.to.end());
  indices.insert(indices.end(), plan.arrivalAt.begin(), plan.arrivalAt.end());
  if (!indices.empty()) {
    scratch.index.reserve(indices.size());
    copyToDevice(scratch.index.data(), indices.data(), indices.size() * sizeof(std::uint32_t));
  }
  const ParticleSpans to = spansOf(p);
  if (moves > 0) {
    const std::uint32_t* from = scratch.index.data();
    moveKernel<<<blocksFor(moves), kBlock, 0, stream>>>(static_cast<std::uint32_t>(moves), from,
                                                        from + moves, to, counts);
    BHVIZ_CUDA_CHECK_LAUNCH();
  }
  if (arrivals > 0) {
    placeKernel<<<blocksFor(arrivals), kBlock, 0, stream>>>(static_cast<std::uint32_t>(arrivals),
                                                            scratch.index.data() + 2 * moves,
                                                            arriving, to, counts);
    BHVIZ_CUDA_CHECK_LAUNCH();
  }
  p.n = size;
  ws.reserve(size);
}

}  // namespace bhviz::sim::cuda
