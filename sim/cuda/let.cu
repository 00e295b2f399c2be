// The LET cut on the device (let.h), level by level as the CPU's breadth-first queue takes it:
// each level's cells are classified against the region (accepted, an opened leaf, opened), the
// counts of their children and leaf particles scanned into offsets, and the level's records,
// the next level's cells and the opened leaves' particles written. The order is the CPU's: the
// cells of a level in their parents' order, children together. The tree bounds the LET, so each
// level is written where it goes in buffers of the tree's size. The whole cut is one cooperative
// launch (grid-wide barriers between a level's steps) and one wait: a launch per step of each
// level, even queued without a wait, had cost 0.45 ms a cut at 16 M particles on an H200, most
// of it the launches and scans over the tree's width of each level.
#include <cooperative_groups.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
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

/// Whether cell c of `t` is opened for `region`: its children to take (high half) and its leaf
/// particles to send (low half), packed.
__device__ std::uint64_t classifyCell(std::uint32_t c, const CutArgs& t, const MacSetup& mac,
                                      const Box& region, float accMin) {
  const float d2 = distSqPointBox(xyz(t.comMass[c]), region);
  const bool open =
      mustOpen(mac.code, t.opening[c] * kLetGuard, d2, accMin, overlaps(t.box[c], region));
  const unsigned n = t.childCount[c];
  return packCounts(open && n > 0 ? n : 0u, open && n == 0 ? t.count[c] : 0u);
}

/// The LET's arrays (a level's records go from its base on).
struct LevelOut {
  std::uint32_t *first, *count, *child;
  std::uint8_t *childCount, *level;
  Vec4* comMass;
  Quadrupole* quad;
  Box* box;
  float *bmax, *opening;
  Vec4* posMass;  // the leaf particles
};

/// Writes the record of frontier entry k (cell c) of level `s`, its children into the next
/// frontier and its leaf particles: `counts` its packed count, `offset` the level's sum before.
__device__ void emitCell(std::uint32_t k, std::uint32_t c, const LetLevelState& s,
                         std::uint64_t counts, std::uint64_t offset, const CutArgs& t,
                         const LevelOut& o, std::uint32_t* next) {
  const std::uint32_t nextBase = s.base + s.cells, particleBase = s.particleBase;
  const std::uint32_t nc = childrenOf(counts), np = particlesOf(counts);
  const std::uint32_t childOffset = childrenOf(offset), particleOffset = particlesOf(offset);
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
  for (std::uint32_t j = 0; j < nc; ++j) next[childOffset + j] = t.child[c] + j;
  for (std::uint32_t j = 0; j < np; ++j)
    o.posMass[particleBase + particleOffset + j] = t.posMass[t.first[c] + j];
}

constexpr int kCutBlock = 256;

/// One cut's arguments: the tree, the region, the scratch it is written into.
struct CutLaunch {
  CutArgs tree;
  MacSetup mac;
  Box region;
  float accMin;
  int levels;                  // the tree's
  std::uint32_t* frontier[2];  // a level's cells, the next level's
  std::uint64_t* counts;       // per frontier cell, packed
  std::uint64_t* blockSums;    // per block, its cells' counts summed
  LetLevelState* state;        // levels + 1
  LevelOut out;
};

/// The whole cut in one cooperative launch, level by level: each block takes a contiguous run
/// of the level's frontier, classifies it and sums its counts; after a grid-wide barrier each
/// block adds the sums of the blocks before it and scans its run again, writing the records,
/// the next frontier and the particles in the CPU's order. Two barriers a level, where a
/// launch per step had cost ~25 µs a level (0.45 ms a cut at 16 M particles on an H200).
__global__ void __launch_bounds__(kCutBlock) cutKernel(CutLaunch a) {
  namespace cg = cooperative_groups;
  using Scan = cub::BlockScan<std::uint64_t, kCutBlock>;
  using Reduce = cub::BlockReduce<std::uint64_t, kCutBlock>;
  __shared__ union {
    typename Scan::TempStorage scan;
    typename Reduce::TempStorage reduce[2];
  } temp;
  const cg::grid_group grid = cg::this_grid();
  if (grid.thread_rank() == 0) {
    a.frontier[0][0] = 0;  // the root
    a.state[0] = {1, 0, 0};
  }
  grid.sync();
  for (int L = 0; L < a.levels; ++L) {
    const LetLevelState s = a.state[L];
    if (s.cells == 0) return;  // every block reads the same: all leave
    const std::uint32_t* cells = a.frontier[L % 2];
    std::uint32_t* next = a.frontier[(L + 1) % 2];
    const std::uint32_t run = (s.cells + gridDim.x - 1) / gridDim.x;
    const std::uint32_t begin = min(s.cells, blockIdx.x * run), end = min(s.cells, begin + run);
    std::uint64_t mine = 0;
    for (std::uint32_t k = begin + threadIdx.x; k < end; k += blockDim.x) {
      const std::uint64_t c = classifyCell(cells[k], a.tree, a.mac, a.region, a.accMin);
      a.counts[k] = c;
      mine += c;
    }
    const std::uint64_t blockSum = Reduce(temp.reduce[0]).Sum(mine);
    if (threadIdx.x == 0) a.blockSums[blockIdx.x] = blockSum;
    grid.sync();
    // The blocks before this one, and all (the next level's state): a few hundred sums.
    std::uint64_t before = 0, all = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
      const std::uint64_t v = a.blockSums[b];
      all += v;
      if (b < blockIdx.x) before += v;
    }
    __syncthreads();  // temp.reduce[0] is read again below
    before = Reduce(temp.reduce[0]).Sum(before);
    all = Reduce(temp.reduce[1]).Sum(all);
    __shared__ std::uint64_t offset;
    if (threadIdx.x == 0) {
      offset = before;
      if (blockIdx.x == 0) {
        a.state[L + 1] = {childrenOf(all), s.base + s.cells, s.particleBase + particlesOf(all)};
      }
    }
    __syncthreads();
    for (std::uint32_t tile = begin; tile < end; tile += blockDim.x) {
      const std::uint32_t k = tile + threadIdx.x;
      const std::uint64_t c = k < end ? a.counts[k] : 0;
      std::uint64_t at = 0, tileSum = 0;
      Scan(temp.scan).ExclusiveSum(c, at, tileSum);
      if (k < end) emitCell(k, cells[k], s, c, offset + at, a.tree, a.out, next);
      __syncthreads();  // every thread read `offset` and the scan's storage
      if (threadIdx.x == 0) offset += tileSum;
      __syncthreads();
    }
    grid.sync();
  }
}

/// The sizes of a cut left in the scratch's arrays (level by level, as the LET orders them).
struct ScratchCut {
  std::vector<std::uint32_t> levelBegin;  ///< with the extra entry at the end
  std::uint32_t cells = 0, particles = 0;
};

/// Blocks of the cut's cooperative grid: all resident at once, at most two an SM (each barrier
/// waits for every block).
unsigned cutBlocks() {
  int device = 0, sms = 0, perSm = 0;
  BHVIZ_CUDA_CHECK(cudaGetDevice(&device));
  BHVIZ_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  BHVIZ_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, cutKernel, kCutBlock, 0));
  if (perSm < 1) throw std::runtime_error("the LET cut's kernel cannot run on this device");
  return static_cast<unsigned>(sms * std::min(perSm, 2));
}

/// The cut, left in `scratch` (LetScratch's first … posMass).
ScratchCut cutToScratch(const DeviceTree& tree, const DeviceParticles& p, const MacSetup& mac,
                        const TargetRegion& region, LetScratch& w, Stream stream) {
  ScratchCut cut;
  if (!region.any() || tree.cells == 0) return cut;
  if (tree.levelBegin.size() < 2)
    throw std::logic_error("a LET cut of a tree without its level table");
  // The LET is a part of the tree: the tree's cell and particle counts bound it, so the levels
  // are written where they go and the whole LET leaves the scratch once at the end.
  const std::size_t maxCells = tree.cells, maxParticles = std::max<std::size_t>(p.n, 1);
  for (auto* b : {&w.first, &w.count, &w.child, &w.frontier[0], &w.frontier[1]})
    b->reserve(maxCells);
  w.childCount.reserve(maxCells);
  w.level.reserve(maxCells);
  w.comMass.reserve(maxCells);
  w.quad.reserve(maxCells);
  w.box.reserve(maxCells);
  w.bmax.reserve(maxCells);
  w.opening.reserve(maxCells);
  w.posMass.reserve(maxParticles);
  w.counts.reserve(maxCells);
  if (w.blocks == 0) w.blocks = cutBlocks();
  w.blockSums.reserve(w.blocks);
  const int levels = tree.depth();
  w.state.reserve(static_cast<std::size_t>(levels) + 1);
  CutLaunch a{{tree.first.data(), tree.count.data(), tree.child.data(), tree.childCount.data(),
               tree.level.data(), tree.comMass.data(), tree.quad.data(), tree.box.data(),
               tree.bmax.data(), tree.opening.data(), p.posMass.data()},
              mac,
              region.box,
              region.accMin,
              levels,
              {w.frontier[0].data(), w.frontier[1].data()},
              w.counts.data(),
              w.blockSums.data(),
              w.state.data(),
              {w.first.data(), w.count.data(), w.child.data(), w.childCount.data(), w.level.data(),
               w.comMass.data(), w.quad.data(), w.box.data(), w.bmax.data(), w.opening.data(),
               w.posMass.data()}};
  // The states past the last level with cells stay as they were: the host stops at the first
  // without cells, which the cut writes.
  void* args[] = {&a};
  BHVIZ_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(cutKernel),
                                               dim3(w.blocks), dim3(kCutBlock), args, 0, stream));
  std::vector<LetLevelState> sizes(static_cast<std::size_t>(levels) + 1);
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(sizes.data(), w.state.data(),
                                   sizes.size() * sizeof(LetLevelState), cudaMemcpyDeviceToHost,
                                   stream));
  synchronize(stream);
  // The levels with cells (the frontier, once empty, stays so), and the end.
  for (const LetLevelState& s : sizes) {
    if (s.cells == 0) break;
    cut.levelBegin.push_back(s.base);
  }
  if (cut.levelBegin.size() == sizes.size()) throw std::logic_error("a LET cut past the leaves");
  const LetLevelState& last = sizes[cut.levelBegin.size()];
  cut.levelBegin.push_back(last.base);
  cut.cells = last.base;
  cut.particles = last.particleBase;
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
