// The LET cut on the device (let.h), level by level as the CPU's breadth-first queue takes it:
// each level's cells are classified against the region (accepted, an opened leaf, opened), the
// counts of their children and leaf particles scanned into offsets, and the level's records,
// the next level's cells and the opened leaves' particles written. The order is the CPU's: the
// cells of a level in their parents' order, children together. The tree bounds the LET, so each
// level is written where it goes in buffers of the tree's size, and the LET comes to the host once;
// a level costs two scans and one 8-byte read.
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

__global__ void classifyKernel(std::uint32_t cells, const std::uint32_t* __restrict__ frontier,
                               CutArgs t, MacSetup mac, Box region, float accMin,
                               std::uint32_t* __restrict__ children,
                               std::uint32_t* __restrict__ particles) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= cells) return;
  const std::uint32_t c = frontier[k];
  const float d2 = distSqPointBox(xyz(t.comMass[c]), region);
  const bool open =
      mustOpen(mac.code, t.opening[c] * kLetGuard, d2, accMin, overlaps(t.box[c], region));
  const unsigned n = t.childCount[c];
  children[k] = open && n > 0 ? n : 0u;
  particles[k] = open && n == 0 ? t.count[c] : 0u;
}

struct LevelOut {
  std::uint32_t *first, *count, *child;
  std::uint8_t *childCount, *level;
  Vec4* comMass;
  Quadrupole* quad;
  Box* box;
  float *bmax, *opening;
  Vec4* posMass;        // the level's leaf particles
  std::uint32_t* next;  // the next level's cells
};

__global__ void emitKernel(std::uint32_t cells, const std::uint32_t* __restrict__ frontier,
                           CutArgs t, const std::uint32_t* __restrict__ children,
                           const std::uint32_t* __restrict__ childOffset,
                           const std::uint32_t* __restrict__ particles,
                           const std::uint32_t* __restrict__ particleOffset, std::uint32_t nextBase,
                           std::uint32_t particleBase, LevelOut o) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= cells) return;
  const std::uint32_t c = frontier[k];
  const std::uint32_t nc = children[k], np = particles[k];
  o.first[k] = np > 0 ? particleBase + particleOffset[k] : 0u;
  o.count[k] = np;
  o.child[k] = nc > 0 ? nextBase + childOffset[k] : 0u;
  o.childCount[k] = static_cast<std::uint8_t>(nc);
  o.level[k] = t.level[c];
  o.comMass[k] = t.comMass[c];
  o.quad[k] = t.quad[c];
  o.box[k] = t.box[c];
  o.bmax[k] = t.bmax[c];
  o.opening[k] = t.opening[c];
  for (std::uint32_t j = 0; j < nc; ++j) o.next[childOffset[k] + j] = t.child[c] + j;
  for (std::uint32_t j = 0; j < np; ++j)
    o.posMass[particleOffset[k] + j] = t.posMass[t.first[c] + j];
}

__global__ void totalKernel(const std::uint32_t* offset, const std::uint32_t* count,
                            std::uint32_t* out) {
  out[0] = *offset;
  out[1] = *count;
}

/// Exclusive sum of n counts into `offsets`; returns the total (blocking).
std::uint32_t scan(const std::uint32_t* counts, std::uint32_t* offsets, std::uint32_t n,
                   DeviceBuffer<unsigned char>& temp, DeviceBuffer<std::uint32_t>& total,
                   Stream stream) {
  std::size_t bytes = 0;
  BHVIZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, counts, offsets, n, stream));
  temp.reserve(std::max<std::size_t>(bytes, 1));
  BHVIZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, counts, offsets, n, stream));
  total.reserve(2);  // the last offset and the last count, read in one copy
  totalKernel<<<1, 1, 0, stream>>>(offsets + (n - 1), counts + (n - 1), total.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  std::uint32_t last[2] = {0, 0};
  copyToHost(last, total.data(), sizeof last);
  return last[0] + last[1];
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
  auto& [frontier, children, childOffset, particles, particleOffset, temp, total, first, count,
         child, childCount, level, comMass, posMass, quad, box, bmax, opening] = w;
  for (auto* b : {&first, &count, &child}) b->reserve(maxCells);
  childCount.reserve(maxCells);
  level.reserve(maxCells);
  comMass.reserve(maxCells);
  quad.reserve(maxCells);
  box.reserve(maxCells);
  bmax.reserve(maxCells);
  opening.reserve(maxCells);
  posMass.reserve(maxParticles);
  for (auto* b :
       {&frontier[0], &frontier[1], &children, &childOffset, &particles, &particleOffset}) {
    b->reserve(maxCells);
  }
  const std::uint32_t root = 0;
  copyToDevice(frontier[0].data(), &root, sizeof root);
  std::uint32_t cells = 1, base = 0, leafParticles = 0;
  int current = 0;
  while (cells > 0) {
    classifyKernel<<<blocksFor(cells), kBlock, 0, stream>>>(cells, frontier[current].data(), t, mac,
                                                            region.box, region.accMin,
                                                            children.data(), particles.data());
    BHVIZ_CUDA_CHECK_LAUNCH();
    const std::uint32_t next =
        scan(children.data(), childOffset.data(), cells, temp, total, stream);
    const std::uint32_t levelParticles =
        scan(particles.data(), particleOffset.data(), cells, temp, total, stream);
    const LevelOut o{first.data() + base,
                     count.data() + base,
                     child.data() + base,
                     childCount.data() + base,
                     level.data() + base,
                     comMass.data() + base,
                     quad.data() + base,
                     box.data() + base,
                     bmax.data() + base,
                     opening.data() + base,
                     posMass.data() + leafParticles,
                     frontier[1 - current].data()};
    emitKernel<<<blocksFor(cells), kBlock, 0, stream>>>(
        cells, frontier[current].data(), t, children.data(), childOffset.data(), particles.data(),
        particleOffset.data(), base + cells, leafParticles, o);
    BHVIZ_CUDA_CHECK_LAUNCH();
    cut.levelBegin.push_back(base);
    base += cells;
    leafParticles += levelParticles;
    cells = next;
    current = 1 - current;
  }
  cut.levelBegin.push_back(base);
  cut.cells = base;
  cut.particles = leafParticles;
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
