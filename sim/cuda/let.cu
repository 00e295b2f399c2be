// The LET cut on the device (let.h), level by level as the CPU's breadth-first queue takes it:
// each level's cells are classified against the region (accepted, an opened leaf, opened), the
// counts of their children and leaf particles scanned into offsets, and the level's records,
// the next level's cells and the opened leaves' particles written. The order is the CPU's: the
// cells of a level in their parents' order, children together. The tree bounds the LET, so each
// level is written where it goes in buffers of the tree's size. A level costs one scan (children
// and leaf particles packed in one 64-bit count) over the tree's cells of that level, which bound
// it, so that the host queues every level without reading their sizes: it waits once per cut
// (one wait per level had cost ~1 ms of a 16 M-particle rank's step on an H200).
#include <algorithm>
#include <climits>
#include <cstring>
#include <cub/device/device_scan.cuh>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/let.h"

namespace bhviz::sim::cuda {

namespace {

struct CutArgs {
  const std::uint32_t* first;
  const std::uint32_t* count;
  const std::uint32_t* child;
  const std::uint8_t* childCount;
  const std::uint8_t* level;
  const Vec4* comMass;
  const Quadrupole* quad;
  const Box* box;
  const float* bmax;
  const float* opening;
  const Vec4* posMass;
};

/// A cell's children to take (high 32 bits) and leaf particles to send (low 32 bits) in one
/// count, so that one scan gives both offsets: a level's particles stay below 2^32 (they are
/// the rank's), so the low half never carries into the high one.
__host__ __device__ inline std::uint64_t packCounts(std::uint32_t children,
                                                    std::uint32_t particles) {
  return (static_cast<std::uint64_t>(children) << 32) | particles;
}
__host__ __device__ inline std::uint32_t childrenOf(std::uint64_t packed) {
  return static_cast<std::uint32_t>(packed >> 32);
}
__host__ __device__ inline std::uint32_t particlesOf(std::uint64_t packed) {
  return static_cast<std::uint32_t>(packed & 0xffffffffu);
}

__global__ void startCutKernel(std::uint32_t* frontier, LetLevelState* state) {
  frontier[0] = 0;  // the root
  state[0] = {1, 0, 0};
}

/// Classifies the level's cells; the grid reaches `bound` (the tree's cells at this level,
/// which bound them), and the counts past the cells are zeroed for the scan over `bound`.
__global__ void classifyKernel(std::uint32_t bound, const LetLevelState* __restrict__ state,
                               const std::uint32_t* __restrict__ frontier, CutArgs t, MacSetup mac,
                               Box region, float accMin, std::uint64_t* __restrict__ counts) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= bound) return;
  if (k >= state->cells) {
    counts[k] = 0;
    return;
  }
  const std::uint32_t c = frontier[k];
  const float d2 = distSqPointBox(xyz(t.comMass[c]), region);
  const bool open =
      mustOpen(mac.code, t.opening[c] * kLetGuard, d2, accMin, overlaps(t.box[c], region));
  const unsigned n = t.childCount[c];
  counts[k] = packCounts(open && n > 0 ? n : 0u, open && n == 0 ? t.count[c] : 0u);
}

/// The LET's arrays (a level's records go from its base on) and the next level's frontier.
struct LevelOut {
  std::uint32_t *first, *count, *child;
  std::uint8_t *childCount, *level;
  Vec4* comMass;
  Quadrupole* quad;
  Box* box;
  float *bmax, *opening;
  Vec4* posMass;        // the leaf particles
  std::uint32_t* next;  // the next level's cells
};

__global__ void emitKernel(std::uint32_t bound, const LetLevelState* __restrict__ state,
                           const std::uint32_t* __restrict__ frontier, CutArgs t,
                           const std::uint64_t* __restrict__ counts,
                           const std::uint64_t* __restrict__ offsets, LevelOut o) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  const LetLevelState s = *state;
  if (k >= bound || k >= s.cells) return;
  const std::uint32_t c = frontier[k];
  const std::uint32_t nextBase = s.base + s.cells, particleBase = s.particleBase;
  const std::uint32_t nc = childrenOf(counts[k]), np = particlesOf(counts[k]);
  const std::uint32_t childOffset = childrenOf(offsets[k]),
                      particleOffset = particlesOf(offsets[k]);
  const std::uint32_t at = s.base + k;
  o.first[at] = np > 0 ? particleBase + particleOffset : 0u;
  o.count[at] = np;
  o.child[at] = nc > 0 ? nextBase + childOffset : 0u;
  o.childCount[at] = static_cast<std::uint8_t>(nc);
  o.level[at] = t.level[c];
  o.comMass[at] = t.comMass[c];
  o.quad[at] = t.quad[c];
  o.box[at] = t.box[c];
  o.bmax[at] = t.bmax[c];
  o.opening[at] = t.opening[c];
  for (std::uint32_t j = 0; j < nc; ++j) o.next[childOffset + j] = t.child[c] + j;
  for (std::uint32_t j = 0; j < np; ++j)
    o.posMass[particleBase + particleOffset + j] = t.posMass[t.first[c] + j];
}

/// The next level's state from the level's scan (its last cell's offset and count).
__global__ void advanceKernel(const std::uint64_t* __restrict__ offsets,
                              const std::uint64_t* __restrict__ counts, LetLevelState* state) {
  const LetLevelState s = state[0];
  const std::uint64_t sum = s.cells > 0 ? offsets[s.cells - 1] + counts[s.cells - 1] : 0;
  state[1] = {childrenOf(sum), s.base + s.cells, s.particleBase + particlesOf(sum)};
}

}  // namespace

namespace {

/// The sizes of a cut left in the scratch's arrays (level by level, as the LET orders them).
struct ScratchCut {
  std::vector<std::uint32_t> levelBegin;  ///< with the extra entry at the end
  std::uint32_t cells = 0, particles = 0;
};

/// The cut, left in `scratch` (LetScratch's first … posMass).
ScratchCut cutToScratch(const DeviceTree& tree, const DeviceParticles& p, const MacSetup& mac,
                        const TargetRegion& region, LetScratch& scratch, Stream stream) {
  ScratchCut cut;
  if (!region.any() || tree.cells == 0) return cut;
  const CutArgs t{tree.first.data(), tree.count.data(),   tree.child.data(), tree.childCount.data(),
                  tree.level.data(), tree.comMass.data(), tree.quad.data(),  tree.box.data(),
                  tree.bmax.data(),  tree.opening.data(), p.posMass.data()};
  // The LET is a part of the tree: the tree's cell and particle counts bound it, so the levels
  // are written where they go and the whole LET leaves the scratch once at the end.
  const std::size_t maxCells = tree.cells, maxParticles = std::max<std::size_t>(p.n, 1);
  LetScratch& w = scratch;
  auto& [frontier, counts, offsets, temp, state, first, count, child, childCount, level, comMass,
         posMass, quad, box, bmax, opening] = w;
  for (auto* b : {&first, &count, &child}) b->reserve(maxCells);
  childCount.reserve(maxCells);
  level.reserve(maxCells);
  comMass.reserve(maxCells);
  quad.reserve(maxCells);
  box.reserve(maxCells);
  bmax.reserve(maxCells);
  opening.reserve(maxCells);
  posMass.reserve(maxParticles);
  for (auto* b : {&frontier[0], &frontier[1]}) b->reserve(maxCells);
  counts.reserve(maxCells);
  offsets.reserve(maxCells);
  // Each level's grid and scan reach over the tree's cells of that level, which bound the
  // frontier: every level is queued without the host learning its size, and the sizes come
  // back once at the end (one wait per cut, not one per level: ~20 at 16 M particles).
  std::vector<std::uint32_t> bounds;
  for (int L = 0; L < tree.depth(); ++L) {
    const auto l = static_cast<std::size_t>(L);
    bounds.push_back(tree.levelBegin[l + 1] - tree.levelBegin[l]);
  }
  if (bounds.empty()) throw std::logic_error("a LET cut of a tree without its level table");
  const int levels = static_cast<int>(bounds.size());
  const std::uint32_t widest = *std::max_element(bounds.begin(), bounds.end());
  std::size_t scanBytes = 0;
  BHVIZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scanBytes, counts.data(), offsets.data(),
                                                 widest, stream));
  temp.reserve(std::max<std::size_t>(scanBytes, 1));
  state.reserve(static_cast<std::size_t>(levels) + 1);
  startCutKernel<<<1, 1, 0, stream>>>(frontier[0].data(), state.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  const LevelOut o{first.data(), count.data(),   child.data(),   childCount.data(),
                   level.data(), comMass.data(), quad.data(),    box.data(),
                   bmax.data(),  opening.data(), posMass.data(), nullptr};
  for (int L = 0; L < levels; ++L) {
    const std::uint32_t bound = bounds[static_cast<std::size_t>(L)];
    const std::uint32_t* cells = frontier[L % 2].data();
    const LetLevelState* s = state.data() + L;
    classifyKernel<<<blocksFor(bound), kBlock, 0, stream>>>(bound, s, cells, t, mac, region.box,
                                                            region.accMin, counts.data());
    BHVIZ_CUDA_CHECK_LAUNCH();
    std::size_t bytes = scanBytes;
    BHVIZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, counts.data(),
                                                   offsets.data(), bound, stream));
    LevelOut out = o;
    out.next = frontier[(L + 1) % 2].data();
    emitKernel<<<blocksFor(bound), kBlock, 0, stream>>>(bound, s, cells, t, counts.data(),
                                                        offsets.data(), out);
    BHVIZ_CUDA_CHECK_LAUNCH();
    advanceKernel<<<1, 1, 0, stream>>>(offsets.data(), counts.data(), state.data() + L);
    BHVIZ_CUDA_CHECK_LAUNCH();
  }
  std::vector<LetLevelState> sizes(static_cast<std::size_t>(levels) + 1);
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(sizes.data(), state.data(), sizes.size() * sizeof(LetLevelState),
                                   cudaMemcpyDeviceToHost, stream));
  synchronize(stream);
  // The levels with cells (the frontier, once empty, stays so), and the end.
  for (const LetLevelState& s : sizes) {
    if (s.cells == 0) break;
    cut.levelBegin.push_back(s.base);
  }
  if (cut.levelBegin.size() == sizes.size()) throw std::logic_error("a LET cut past the leaves");
  const LetLevelState& end = sizes[cut.levelBegin.size()];
  cut.levelBegin.push_back(end.base);
  cut.cells = end.base;
  cut.particles = end.particleBase;
  return cut;
}

template <typename T>
void copyArray(std::byte* to, const DeviceBuffer<T>& from, std::size_t n, Stream stream) {
  copyOnDevice(to, from.data(), n * sizeof(T), stream);
}

}  // namespace

LetSize cutEssentialTreeBytes(const DeviceTree& tree, const DeviceParticles& p,
                              const KeyFrame& frame, const MacSetup& mac,
                              const TargetRegion& region, LetScratch& scratch, DeviceBytes& out,
                              Stream stream) {
  const ScratchCut cut = cutToScratch(tree, p, mac, region, scratch, stream);
  if (cut.cells == 0) return {};
  const LetHeader h{kLetMagic, static_cast<std::uint32_t>(cut.levelBegin.size()), cut.cells,
                    cut.particles, frame};
  const LetLayout l = letLayout(h.levels, h.cells, h.particles);
  std::byte* at = out.append(l.size, stream);
  // The header and levelBegin from the host in one copy, the padding zeroed with it.
  std::vector<std::byte> head(l.first, std::byte{0});
  std::memcpy(head.data(), &h, sizeof h);
  std::memcpy(head.data() + l.levelBegin, cut.levelBegin.data(),
              cut.levelBegin.size() * sizeof(std::uint32_t));
  // On `stream`, after append's zeroing (pageable memory: staged before the call returns).
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(at, head.data(), head.size(), cudaMemcpyHostToDevice, stream));
  const LetScratch& w = scratch;
  forEachLetArray(l, w, cut.cells, w.posMass, cut.particles,
                  [&](std::size_t offset, const auto& from, std::uint64_t n) {
                    copyArray(at + offset, from, static_cast<std::size_t>(n), stream);
                  });
  return {l.size, cut.cells, cut.particles};
}

LetTree cutEssentialTree(const DeviceTree& tree, const DeviceParticles& p, const KeyFrame& frame,
                         const MacSetup& mac, const TargetRegion& region, LetScratch& scratch,
                         DeviceBytes& bytes, Stream stream) {
  // The cut as bytes, read back once and parsed as the bytes of any LET.
  bytes.clear();
  const LetSize size = cutEssentialTreeBytes(tree, p, frame, mac, region, scratch, bytes, stream);
  if (size.bytes == 0) return {};
  std::vector<std::byte> host(size.bytes);
  BHVIZ_CUDA_CHECK(
      cudaMemcpyAsync(host.data(), bytes.data(), host.size(), cudaMemcpyDeviceToHost, stream));
  synchronize(stream);
  return letFromBytes(host.data(), host.size());
}

std::byte* DeviceBytes::append(std::size_t n, Stream stream) {
  const std::size_t at = m_size;
  if (at + n > m_buffer.capacity()) {
    // Grown keeping the LETs already cut (DeviceBuffer's growth discards them).
    DeviceBuffer<std::byte> grown;
    grown.reserve(std::max(at + n, m_buffer.capacity() * 2));
    copyOnDevice(grown.data(), m_buffer.data(), at, stream);
    synchronize(stream);
    m_buffer.swap(grown);
  }
  m_size = at + n;
  if (n > 0) BHVIZ_CUDA_CHECK(cudaMemsetAsync(m_buffer.data() + at, 0, n, stream));
  return m_buffer.data() + at;
}

std::byte* DeviceBytes::resize(std::size_t n) {
  m_buffer.reserve(std::max<std::size_t>(n, 1));
  m_size = n;
  return m_buffer.data();
}

namespace {

/// Flags a cell whose links or particle range leave the LET (letFromBytes's checks).
__global__ void checkLetKernel(std::uint32_t cells, std::uint32_t particles,
                               const std::uint32_t* __restrict__ first,
                               const std::uint32_t* __restrict__ count,
                               const std::uint32_t* __restrict__ child,
                               const std::uint8_t* __restrict__ childCount,
                               std::uint32_t* __restrict__ fault) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= cells) return;
  const std::uint32_t n = childCount[k];
  const bool linksOk = n == 0 || (n <= 8 && n <= cells && child[k] > k && child[k] <= cells - n);
  const bool rangeOk = first[k] <= particles && count[k] <= particles - first[k];
  if (!linksOk || !rangeOk) atomicMin(fault, k);
}

__global__ void letRecordsKernel(std::uint32_t cells, const Vec4* __restrict__ comMass,
                                 const Quadrupole* __restrict__ quad, const Box* __restrict__ box,
                                 const float* __restrict__ opening,
                                 const std::uint32_t* __restrict__ first,
                                 const std::uint32_t* __restrict__ count,
                                 const std::uint32_t* __restrict__ child,
                                 const std::uint8_t* __restrict__ childCount,
                                 WalkCell* __restrict__ records) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= cells) return;
  records[k] = walkCellOf(comMass[k], quad[k], box[k], opening[k], first[k], count[k], child[k],
                          childCount[k]);
}

template <typename T>
void upload(DeviceBuffer<T>& d, const std::vector<T>& h) {
  d.reserve(std::max<std::size_t>(h.size(), 1));
  if (!h.empty()) copyToDevice(d.data(), h.data(), h.size() * sizeof(T));
}

}  // namespace

void uploadImportedLet(const LetTree& let, ImportedLet& d, Stream stream) {
  const Tree& t = let.tree;
  const std::size_t cells = t.cellCount();
  upload(d.comMass, t.comMass);
  upload(d.quad, t.quad);
  upload(d.box, t.box);
  upload(d.opening, t.opening);
  upload(d.first, t.first);
  upload(d.count, t.count);
  upload(d.child, t.child);
  upload(d.childCount, t.childCount);
  upload(d.posMass, let.posMass);
  d.records.reserve(std::max<std::size_t>(cells, 1));
  if (cells == 0) return;
  letRecordsKernel<<<blocksFor(cells), kBlock, 0, stream>>>(
      static_cast<std::uint32_t>(cells), d.comMass.data(), d.quad.data(), d.box.data(),
      d.opening.data(), d.first.data(), d.count.data(), d.child.data(), d.childCount.data(),
      d.records.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
}

}  // namespace bhviz::sim::cuda

namespace bhviz::sim::cuda {

LetView importLetBytes(const std::byte* bytes, std::size_t size, DeviceBuffer<WalkCell>& records,
                       DeviceBuffer<std::uint32_t>& fault, Stream stream) {
  LetHeader h{};
  if (size < sizeof h) throw std::invalid_argument("a LET of " + std::to_string(size) + " bytes");
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(&h, bytes, sizeof h, cudaMemcpyDeviceToHost, stream));
  synchronize(stream);
  if (h.magic != kLetMagic) throw std::invalid_argument("received bytes that are not a LET");
  if (h.levels > size || h.cells > size || h.particles > size ||
      letLayout(h.levels, h.cells, h.particles).size != size) {
    throw std::invalid_argument("a LET whose header does not match its " + std::to_string(size) +
                                " bytes");
  }
  const LetLayout l = letLayout(h.levels, h.cells, h.particles);
  const auto cells = static_cast<std::uint32_t>(h.cells);
  const auto particles = static_cast<std::uint32_t>(h.particles);
  const auto* first = reinterpret_cast<const std::uint32_t*>(bytes + l.first);
  const auto* count = reinterpret_cast<const std::uint32_t*>(bytes + l.count);
  const auto* child = reinterpret_cast<const std::uint32_t*>(bytes + l.child);
  const auto* childCount = reinterpret_cast<const std::uint8_t*>(bytes + l.childCount);
  LetView v;
  v.box = reinterpret_cast<const Box*>(bytes + l.box);
  v.posMass = reinterpret_cast<const Vec4*>(bytes + l.posMass);
  v.size = {size, h.cells, h.particles};
  records.reserve(std::max<std::size_t>(cells, 1));
  v.records = records.data();
  if (cells == 0) return v;
  fault.reserve(1);
  const std::uint32_t none = UINT32_MAX;
  BHVIZ_CUDA_CHECK(
      cudaMemcpyAsync(fault.data(), &none, sizeof none, cudaMemcpyHostToDevice, stream));
  checkLetKernel<<<blocksFor(cells), kBlock, 0, stream>>>(cells, particles, first, count, child,
                                                          childCount, fault.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  letRecordsKernel<<<blocksFor(cells), kBlock, 0, stream>>>(
      cells, reinterpret_cast<const Vec4*>(bytes + l.comMass),
      reinterpret_cast<const Quadrupole*>(bytes + l.quad), v.box,
      reinterpret_cast<const float*>(bytes + l.opening), first, count, child, childCount,
      records.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  std::uint32_t bad = none;
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(&bad, fault.data(), sizeof bad, cudaMemcpyDeviceToHost, stream));
  synchronize(stream);
  if (bad != none) {
    throw std::invalid_argument("LET cell " + std::to_string(bad) + " links outside the LET");
  }
  return v;
}

}  // namespace bhviz::sim::cuda
