// The mutual near field on the device (P2pMode::Mutual, seed 004, Shan & Lei): the pairs of
// plain P2P, each evaluated once where both sides need it. The rule is the CPU's
// (sim/cpu/walk_mutual.cpp): cut the particles into pieces, each the particles of one group in
// one leaf (or of one leaf in no group); piece a of group g takes piece b of group h when b's
// leaf is on g's list; when also a's leaf is on h's list the two need each other, and the lower
// group evaluates their pairs both ways. A group's pairs within itself, and the pieces of no
// group, go one way, as plain P2P.
//
// Four steps on one stream:
//   1. the walk (walk.cu) with its far field, recording every opened leaf as a (group, leaf) key
//      instead of evaluating it (WalkOutput::nearLeaves); its counters and work are plain's;
//   2. the keys sorted (CUB), so that each group's list is a run in leaf order, found by a binary
//      search (listBegin) and searched by the other groups for their leaves;
//   3. the near field, one warp per group (its ≤ 128 particles in registers, as rows): for each
//      leaf on its list, 32 source particles at a time in shared memory, cut into runs of one
//      group; each run's mode per row (one way, both ways, or the other group's to evaluate)
//      comes from a binary search of the other group's list for the row's leaf. One-way runs
//      take p2p; runs with a row both ways take p2pPair, their counter-forces summed over the
//      warp for 8 sources at a time (a reduce-scatter of 32 floats: lane l ends with component
//      l % 4 of source l / 4) and added to a per-particle array with one atomic a lane. The rows'
//      own sums are added to their targets' accPot;
//   4. the counter-forces added to the targets.
// Only the order of the sums changes against plain P2P (fp32 rounding), and with the atomics it
// varies from run to run. docs/BENCHMARKS.md ("The mutual near field") has what it costs.
#include <algorithm>
#include <cstring>
#include <cub/device/device_radix_sort.cuh>
#include <stdexcept>

#include "sim/common/gravity.h"
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/walk_flush.cuh"
#include "sim/cuda/walk_mutual.h"

namespace bhviz::sim::cuda {

namespace {

constexpr std::uint32_t kNoGroup = 0xffffffffu;  // a particle in no group (groupOf)
constexpr std::uint32_t kNoLeaf = 0xffffffffu;   // a row past the group's particles
constexpr int kNearWarps = 4;                    // warps per block of the near field kernel
constexpr int kBatch = 8;  // sources whose counter-forces are reduced together (8 × 4 = 32)

/// Bits that hold every value below `n` (at least 1).
unsigned bitsFor(std::size_t n) {
  unsigned b = 1;
  while (b < 64 && (std::size_t(1) << b) < n) ++b;
  return b;
}

__global__ void groupOfKernel(const std::uint32_t* __restrict__ first,
                              const std::uint32_t* __restrict__ count,
                              const std::uint32_t* __restrict__ size, std::uint32_t slots,
                              std::uint32_t* __restrict__ groupOf) {
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= slots || g >= *size) return;
  const std::uint32_t begin = first[g], n = count[g];
  for (std::uint32_t k = 0; k < n; ++k) groupOf[begin + k] = g;
}

__global__ void leafOfKernel(const WalkCell* __restrict__ cells, std::uint32_t cellCount,
                             std::uint32_t* __restrict__ leafOf) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cellCount) return;
  const std::uint32_t span = cells[c].span;
  if ((span & 15u) != 0) return;  // an internal cell
  const std::uint32_t begin = cells[c].link, n = span >> 4;
  for (std::uint32_t k = 0; k < n; ++k) leafOf[begin + k] = c;
}

/// The first of the sorted keys [lo, hi) not below `key` (hi: none).
__device__ inline std::uint32_t lowerBound(const std::uint64_t* __restrict__ keys, std::uint32_t lo,
                                           std::uint32_t hi, std::uint64_t key) {
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < key) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// listBegin[g] for g ≤ groups: the first sorted key of group g or later.
__global__ void listBeginKernel(const std::uint64_t* __restrict__ keys, std::uint32_t count,
                                const std::uint32_t* __restrict__ size, std::uint32_t slots,
                                unsigned leafBits, std::uint32_t* __restrict__ listBegin) {
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= slots || g > *size) return;
  listBegin[g] = lowerBound(keys, 0, count, std::uint64_t(g) << leafBits);
}

struct NearArgs {
  const WalkCell* __restrict__ cells;
  const Vec4* __restrict__ posMass;
  Vec4* __restrict__ accPot;
  float* __restrict__ counter;              // four floats a particle
  const std::uint32_t* __restrict__ first;  // the groups' particles
  const std::uint32_t* __restrict__ count;
  const std::uint32_t* __restrict__ size;
  const std::uint32_t* __restrict__ targetFirst;  // and their targets
  const std::uint32_t* __restrict__ targetCount;
  const std::uint32_t* __restrict__ targets;  // null: target k is particle k
  const std::uint64_t* __restrict__ keys;     // sorted
  const std::uint32_t* __restrict__ listBegin;
  const std::uint32_t* __restrict__ groupOf;
  const std::uint32_t* __restrict__ leafOf;
  MutualCounters* counters;
  unsigned leafBits;
  float eps2;
};

/// Whether group h's list holds `leaf`.
__device__ inline bool onList(const NearArgs& a, std::uint32_t h, std::uint32_t leaf) {
  const std::uint64_t key = (std::uint64_t(h) << a.leafBits) | leaf;
  const std::uint32_t end = a.listBegin[h + 1];
  const std::uint32_t at = lowerBound(a.keys, a.listBegin[h], end, key);
  return at < end && a.keys[at] == key;
}

/// One warp's shared memory: a leaf's 32 sources and their groups, then the rows' sums.
struct NearShared {
  Vec4 source[32];
  std::uint32_t group[32];
  Vec4 row[kMaxWalkGroup];
};

/// A row's part in a run of sources of one group: own = 1 where the row takes them (0: the other
/// group evaluates the pairs), both = 1 where its pairs with them are evaluated both ways here.
struct RowMode {
  float own = 0.0f, both = 0.0f;
};

template <int kRows>
struct Rows {
  Vec4 x[kRows];  // position, mass (0 past the group's particles)
  Vec4 acc[kRows];
  std::uint32_t leaf[kRows];  // kNoLeaf past the group's particles
  RowMode mode[kRows];
};

/// The rows' modes for sources of group h (g: the rows' group).
template <int kRows>
__device__ __forceinline__ void decide(const NearArgs& a, std::uint32_t g, std::uint32_t h,
                                       Rows<kRows>& rows) {
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    RowMode m{1.0f, 0.0f};  // one way
    if (rows.leaf[i] == kNoLeaf) {
      m = {0.0f, 0.0f};
    } else if (h != g && h != kNoGroup && onList(a, h, rows.leaf[i])) {
      m = h > g ? RowMode{1.0f, 1.0f} : RowMode{0.0f, 0.0f};
    }
    rows.mode[i] = m;
  }
}

/// Sources [k0, k1) of the shared ring on the rows, one way.
template <int kRows, bool kPot>
__device__ __forceinline__ void oneWay(const NearShared& sh, unsigned k0, unsigned k1, float eps2,
                                       Rows<kRows>& rows) {
  for (unsigned k = k0; k < k1; ++k) {
    const Vec4 s = sh.source[k];
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      p2p<kPot>(xyz(rows.x[i]), Vec4{s.x, s.y, s.z, s.w * rows.mode[i].own}, eps2, rows.acc[i]);
    }
  }
}

/// Sources [k0, k1) on the rows, both ways where the rows' mode says so: each source's
/// counter-force summed over the warp and added to a.counter (source k is particle
/// `firstSource` + k).
template <int kRows, bool kPot>
__device__ __forceinline__ void bothWays(const NearArgs& a, const NearShared& sh, unsigned k0,
                                         unsigned k1, std::uint32_t firstSource, unsigned lane,
                                         Rows<kRows>& rows) {
  for (unsigned kb = k0; kb < k1; kb += kBatch) {
    float c[32];
#pragma unroll
    for (int kk = 0; kk < kBatch; ++kk) {
      Vec4 cj{};
      if (kb + kk < k1) {
        const Vec4 s = sh.source[kb + kk];
#pragma unroll
        for (int i = 0; i < kRows; ++i) {
          const Vec4 xi = rows.x[i];
          p2pPair(Vec4{xi.x, xi.y, xi.z, xi.w * rows.mode[i].both},
                  Vec4{s.x, s.y, s.z, s.w * rows.mode[i].own}, a.eps2, rows.acc[i], cj);
        }
      }
      c[4 * kk] = cj.x, c[4 * kk + 1] = cj.y, c[4 * kk + 2] = cj.z, c[4 * kk + 3] = cj.w;
    }
    halve<16>(c, lane);  // lane l: component l % 4 of source l / 4, summed over the warp
    const unsigned k = kb + lane / 4, component = lane % 4;
    if (k < k1 && (kPot || component < 3)) {
      atomicAdd(a.counter + 4 * std::size_t(firstSource + k) + component, c[0]);
    }
  }
}

/// The pairs each lane's rows evaluated, one way and both ways.
struct PairCounts {
  unsigned long long oneWay = 0, both = 0;
};

/// The rows' modes and for which source group they were decided (valid false: none yet).
struct Decision {
  bool valid = false;
  std::uint32_t group = 0;
};

/// Group g's particles as rows: row r = lane + 32 i.
template <int kRows>
__device__ __forceinline__ void loadRows(const NearArgs& a, std::uint32_t first,
                                         std::uint32_t count, unsigned lane, Rows<kRows>& rows) {
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const std::uint32_t r = lane + 32u * i;
    const bool valid = r < count;
    rows.x[i] = valid ? a.posMass[first + r] : Vec4{};
    rows.leaf[i] = valid ? a.leafOf[first + r] : kNoLeaf;
    rows.acc[i] = {};
  }
}

/// Sources [first, first + n) (n ≤ 32, one leaf's) on group g's rows: put in shared memory, cut
/// into runs of one group, each run evaluated in the rows' mode for it.
template <int kRows, bool kPot>
__device__ __forceinline__ void nearChunk(const NearArgs& a, NearShared& sh, std::uint32_t g,
                                          std::uint32_t first, unsigned n, unsigned lane,
                                          Rows<kRows>& rows, Decision& decided, PairCounts& count) {
  std::uint32_t h = kNoGroup;
  __syncwarp();  // the last chunk's sources are read
  if (lane < n) {
    sh.source[lane] = a.posMass[first + lane];
    h = a.groupOf[first + lane];
    sh.group[lane] = h;
  }
  const std::uint32_t before = __shfl_up_sync(kFull, h, 1);
  unsigned starts = __ballot_sync(kFull, lane < n && (lane == 0 || h != before));
  __syncwarp();
  while (starts != 0) {  // runs of one group
    const unsigned k0 = __ffs(starts) - 1;
    starts &= starts - 1;
    const unsigned k1 = starts != 0 ? unsigned(__ffs(starts) - 1) : n;
    const std::uint32_t src = sh.group[k0];
    if (!decided.valid || src != decided.group) {
      decide(a, g, src, rows);
      decided = {true, src};
    }
    bool own = false, both = false;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      own = own || rows.mode[i].own != 0.0f;
      both = both || rows.mode[i].both != 0.0f;
      if (rows.mode[i].both != 0.0f) {
        count.both += k1 - k0;
      } else if (rows.mode[i].own != 0.0f) {
        count.oneWay += k1 - k0;
      }
    }
    if (__any_sync(kFull, both)) {
      bothWays<kRows, kPot>(a, sh, k0, k1, first, lane, rows);
    } else if (__any_sync(kFull, own)) {
      oneWay<kRows, kPot>(sh, k0, k1, a.eps2, rows);
    }
  }
}

/// The rows' sums added to their targets' accPot (a group's targets are some or all of its
/// particles).
template <int kRows, bool kPot>
__device__ __forceinline__ void storeRows(const NearArgs& a, NearShared& sh, std::uint32_t g,
                                          std::uint32_t first, std::uint32_t count, unsigned lane,
                                          const Rows<kRows>& rows) {
  __syncwarp();
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const std::uint32_t r = lane + 32u * i;
    if (r < count) sh.row[r] = rows.acc[i];
  }
  __syncwarp();
  const std::uint32_t tFirst = a.targetFirst[g], tCount = a.targetCount[g];
  for (std::uint32_t k = lane; k < tCount; k += 32) {
    const std::uint32_t p = particleOf(a.targets, tFirst, k);
    const Vec4 s = sh.row[p - first];
    Vec4& out = a.accPot[p];
    out = {out.x + s.x, out.y + s.y, out.z + s.z, kPot ? out.w + s.w : out.w};
  }
}

template <int kRows, bool kPot>
__global__ void __launch_bounds__(32 * kNearWarps) nearKernel(NearArgs a) {
  __shared__ NearShared shared[kNearWarps];
  NearShared& sh = shared[threadIdx.x / 32];
  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t groups = *a.size;
  PairCounts count;  // this lane's rows'
  for (;;) {
    std::uint32_t g = 0;
    if (lane == 0) g = atomicAdd(&a.counters->nextGroup, 1u);
    g = __shfl_sync(kFull, g, 0);
    if (g >= groups) break;
    const std::uint32_t first = a.first[g], n = a.count[g];
    Rows<kRows> rows;
    loadRows(a, first, n, lane, rows);
    Decision decided;
    const std::uint32_t listEnd = a.listBegin[g + 1];
    for (std::uint32_t e = a.listBegin[g]; e < listEnd; ++e) {
      const WalkCell* leaf = a.cells + std::uint32_t(a.keys[e] & ((1ull << a.leafBits) - 1));
      const std::uint32_t leafFirst = leaf->link, leafCount = leaf->span >> 4;
      for (std::uint32_t base = 0; base < leafCount; base += 32) {
        nearChunk<kRows, kPot>(a, sh, g, leafFirst + base, min(32u, leafCount - base), lane, rows,
                               decided, count);
      }
    }
    storeRows<kRows, kPot>(a, sh, g, first, n, lane, rows);
  }
  // The warp's pair counts.
  for (unsigned o = 16; o > 0; o >>= 1) {
    count.oneWay += __shfl_xor_sync(kFull, count.oneWay, o);
    count.both += __shfl_xor_sync(kFull, count.both, o);
  }
  if (lane == 0) {
    atomicAdd(&a.counters->oneWay, count.oneWay);
    atomicAdd(&a.counters->both, count.both);
  }
}

/// The counter-forces to the targets, one warp a group.
template <bool kPot>
__global__ void counterKernel(const std::uint32_t* __restrict__ targetFirst,
                              const std::uint32_t* __restrict__ targetCount,
                              const std::uint32_t* __restrict__ targets,
                              const std::uint32_t* __restrict__ size,
                              const Vec4* __restrict__ counter, Vec4* __restrict__ accPot) {
  const std::uint32_t groups = *size;
  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t warps = gridDim.x * (blockDim.x / 32);
  for (std::uint32_t g = (blockIdx.x * blockDim.x + threadIdx.x) / 32; g < groups; g += warps) {
    const std::uint32_t tFirst = targetFirst[g], tCount = targetCount[g];
    for (std::uint32_t k = lane; k < tCount; k += 32) {
      const std::uint32_t p = particleOf(targets, tFirst, k);
      const Vec4 c = counter[p];
      Vec4& out = accPot[p];
      out = {out.x + c.x, out.y + c.y, out.z + c.z, kPot ? out.w + c.w : out.w};
    }
  }
}

template <int kRows>
void launchNear(const NearArgs& a, bool potential, unsigned blocks, Stream stream) {
  if (potential) {
    nearKernel<kRows, true><<<blocks, 32 * kNearWarps, 0, stream>>>(a);
  } else {
    nearKernel<kRows, false><<<blocks, 32 * kNearWarps, 0, stream>>>(a);
  }
  BHVIZ_CUDA_CHECK_LAUNCH();
}

/// Keys a particle the lists are first given room for: 1.7 on 1 M Plummer at N_leaf 16, fewer at
/// larger leaves (more at smaller groups: then the walk runs again into more).
constexpr std::size_t kKeysPerParticle = 3;

/// Reserves the workspace for n particles and `keys` keys, after checking that what it adds fits
/// in the device's free memory (a clear error instead of a failed allocation mid-step).
void reserveWorkspace(MutualWorkspace& ws, std::size_t n, std::size_t keys) {
  const std::size_t perKey = 2 * sizeof(std::uint64_t);
  const std::size_t perParticle = 2 * sizeof(std::uint32_t) + sizeof(Vec4);
  const std::size_t have = ws.keys[0].capacity() * perKey +
                           std::min(ws.groupOf.capacity(), ws.counter.capacity()) * perParticle;
  const std::size_t need = keys * perKey + n * perParticle;
  if (need > have) {
    std::size_t freeBytes = 0, totalBytes = 0;
    BHVIZ_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    if (need - have > freeBytes) {
      throw std::runtime_error(
          "the mutual near field (--p2p mutual) needs " + std::to_string((need - have) >> 20) +
          " MiB more device memory for " + std::to_string(n) + " particles than the " +
          std::to_string(freeBytes >> 20) + " MiB free; the plain near field needs none");
    }
  }
  for (auto& k : ws.keys) k.reserve(keys);
  ws.capacity = std::uint32_t(std::max<std::size_t>(keys, ws.capacity));
  ws.groupOf.reserve(n);
  ws.leafOf.reserve(n);
  ws.counter.reserve(n);
}

/// Step 1: the walk with the far field written and the opened leaves recorded, again into more
/// room while the lists outgrow it (`work` counted by the first walk only). Returns the keys.
std::uint32_t recordLists(const DeviceTree& tree, const DeviceGroups& g, DeviceParticles& p,
                          const WalkSettings& s, std::uint32_t* work, WalkCounters* d_counters,
                          const DeviceProperties& device, unsigned leafBits, MutualWorkspace& ws,
                          Stream stream) {
  WalkSettings one = s;
  one.maxParts = 1;  // each group's list once
  for (std::uint32_t* walkWork = work;; walkWork = nullptr) {
    BHVIZ_CUDA_CHECK(cudaMemsetAsync(ws.counters.data(), 0, sizeof(MutualCounters), stream));
    const NearLeaves near{ws.keys[0].data(), &ws.counters.data()->entries, ws.capacity, leafBits};
    WalkOutput out;
    out.work = walkWork;
    out.nearLeaves = &near;
    launchWalk(WalkSources{tree.walkCell.data(), tree.box.data(), tree.cells, p.posMass.data()}, g,
               p, one, out, d_counters, device, stream);
    BHVIZ_CUDA_CHECK(cudaMemcpyAsync(ws.entries.data(), &ws.counters.data()->entries,
                                     sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
    synchronize(stream);
    unsigned long long entries = 0;
    std::memcpy(&entries, ws.entries.data(), sizeof(entries));
    if (entries <= ws.capacity) return std::uint32_t(entries);
    if (entries > 0x7fffffffu) throw std::length_error("launchWalkMutual: too many leaf entries");
    reserveWorkspace(ws, p.n, std::min<std::size_t>(entries + entries / 4, 0x7fffffffu));
  }
}

/// Step 2: the lists sorted into (group, leaf) order, where each group's starts, and which group
/// and leaf each particle is in. Returns the sorted keys.
const std::uint64_t* sortLists(const DeviceTree& tree, const DeviceGroups& g, std::size_t n,
                               std::uint32_t entries, unsigned leafBits, unsigned keyBits,
                               MutualWorkspace& ws, Stream stream) {
  cub::DoubleBuffer<std::uint64_t> keys(ws.keys[0].data(), ws.keys[1].data());
  std::size_t bytes = 0;
  BHVIZ_CUDA_CHECK(
      cub::DeviceRadixSort::SortKeys(nullptr, bytes, keys, int(entries), 0, int(keyBits), stream));
  ws.temp.reserve(bytes);
  BHVIZ_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(ws.temp.data(), bytes, keys, int(entries), 0,
                                                  int(keyBits), stream));
  const std::size_t slots = std::max<std::size_t>(std::min(g.bound, g.capacity), 1) + 1;
  ws.listBegin.reserve(slots);
  listBeginKernel<<<blocksFor(slots), kBlock, 0, stream>>>(
      keys.Current(), entries, g.size.data(), std::uint32_t(slots), leafBits, ws.listBegin.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  BHVIZ_CUDA_CHECK(cudaMemsetAsync(ws.groupOf.data(), 0xff, n * sizeof(std::uint32_t), stream));
  groupOfKernel<<<blocksFor(slots), kBlock, 0, stream>>>(
      g.first.data(), g.count.data(), g.size.data(), std::uint32_t(slots), ws.groupOf.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  leafOfKernel<<<blocksFor(tree.cells), kBlock, 0, stream>>>(
      tree.walkCell.data(), std::uint32_t(tree.cells), ws.leafOf.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  return keys.Current();
}

/// Steps 3 and 4: the near field, then the counter-forces added to the targets.
void launchNearField(const NearArgs& a, int nGroup, bool potential, std::size_t n,
                     const DeviceProperties& device, MutualWorkspace& ws, Stream stream) {
  BHVIZ_CUDA_CHECK(cudaMemsetAsync(ws.counter.data(), 0, n * sizeof(Vec4), stream));
  const unsigned blocks = unsigned(std::max(1, device.multiProcessors) * 8);
  const int rows = (nGroup + 31) / 32;
  if (rows <= 1) {
    launchNear<1>(a, potential, blocks, stream);
  } else if (rows <= 2) {
    launchNear<2>(a, potential, blocks, stream);
  } else {
    launchNear<4>(a, potential, blocks, stream);
  }
  if (potential) {
    counterKernel<true><<<blocks, kBlock, 0, stream>>>(a.targetFirst, a.targetCount, a.targets,
                                                       a.size, ws.counter.data(), a.accPot);
  } else {
    counterKernel<false><<<blocks, kBlock, 0, stream>>>(a.targetFirst, a.targetCount, a.targets,
                                                        a.size, ws.counter.data(), a.accPot);
  }
  BHVIZ_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launchWalkMutual(const DeviceTree& tree, const DeviceGroups& g, DeviceParticles& p,
                      const WalkSettings& s, std::uint32_t* work, WalkCounters* d_counters,
                      const DeviceProperties& device, MutualWorkspace& ws, Stream stream) {
  const std::size_t n = p.n;
  ws.counters.reserve(1);  // recordLists resets them before each walk
  if (n == 0 || tree.cells == 0) {
    BHVIZ_CUDA_CHECK(cudaMemsetAsync(ws.counters.data(), 0, sizeof(MutualCounters), stream));
    launchWalk(tree, g, p, s, d_counters, device, stream);  // resets the counters
    return;
  }
  const unsigned leafBits = bitsFor(tree.cells);
  const unsigned groupBits = bitsFor(std::max<std::size_t>(g.bound, 1) + 1);
  if (leafBits + groupBits > 64) throw std::length_error("launchWalkMutual: keys past 64 bits");
  if (ws.entries.size() == 0) ws.entries.resize(sizeof(unsigned long long));
  reserveWorkspace(
      ws, n,
      ws.capacity > 0 ? ws.capacity : std::min<std::size_t>(kKeysPerParticle * n, 0x7fffffffu));
  const std::uint32_t entries =
      recordLists(tree, g, p, s, work, d_counters, device, leafBits, ws, stream);
  const std::uint64_t* keys =
      sortLists(tree, g, n, entries, leafBits, leafBits + groupBits, ws, stream);
  const NearArgs a{tree.walkCell.data(),
                   p.posMass.data(),
                   p.accPot.data(),
                   reinterpret_cast<float*>(ws.counter.data()),
                   g.first.data(),
                   g.count.data(),
                   g.size.data(),
                   g.targetFirst.data(),
                   g.targetCount.data(),
                   g.compact ? g.targets.data() : nullptr,
                   keys,
                   ws.listBegin.data(),
                   ws.groupOf.data(),
                   ws.leafOf.data(),
                   ws.counters.data(),
                   leafBits,
                   s.softening * s.softening};
  launchNearField(a, g.nGroup, s.potential, n, device, ws, stream);
}

NearPairs downloadNearPairs(const MutualWorkspace& ws) {
  if (ws.counters.capacity() == 0) return {};
  MutualCounters h{};
  copyToHost(&h, ws.counters.data(), sizeof(h));
  return {h.oneWay + h.both, h.both, h.entries};
}

}  // namespace bhviz::sim::cuda
