// Octree topology from sorted keys, the device twin of cpu::buildTree, every level at once.
//
// A cell of level L is a run of keys sharing their first L digits (three bits a level) whose
// parent, the run sharing L − 1, holds more than N_leaf particles. So particle p's cell of level M
// is split exactly when some N_leaf + 1 consecutive keys around p share M digits: with s(i) the
// digits key[i] and key[i + N_leaf] share, p's cells are split down to S(p) = max s(i) over
// i in [p − N_leaf, p], and its leaf is at S(p) + 1 (kMaxLevel at most). The cells whose first
// particle is p are those of levels lo(p) = d(p) + 1 to hi(p) = S(p) + 1, d(p) the digits key[p]
// shares with key[p − 1]. Four launches, whatever the depth:
//   1. spansKernel: lo and hi of every particle (s over a tile and the N_leaf before it, its
//      sliding maximum by doubling in shared memory), and per block the cells of each level
//      that start in its contiguous chunk of particles;
//   2. levelScanKernel: one block, a warp a level, scans those counts: each level's begin (the
//      level table) and each block's first slot in each level;
//   3. writeCellsKernel: each particle writes the cells it starts, at its rank among its level's
//      starts (a ballot in the warp, a scan over the tile's warps, the block's running slot):
//      first, level, first child (the cell a level down that starts at the same particle), for a
//      first child its parent, and the count where the cell's run of digits ends within the warp's
//      particles (the next particle whose run of L digits begins, by ballot: most leaves);
//   4. finishCellsKernel: the other counts (a galloping search over the keys, a thread a cell);
//      each first child gives its later siblings their parent and the parent its child count.
// Within a level, cells come in the order of their first particle, which is the CPU's order
// (children appended in parent order, then digit order). The build reads only the digits the
// keys are sorted on (ws.sortedLevels, launchSortAndTree's shorter sort): a tree found to split a
// cell of that level (deeper than the sorted digits) is built again after a sort on every bit.
// The cell buffers are sized by an estimate; when the level table says they are too small, the
// build is repeated with larger ones (rare: the buffers keep their size between steps).
// Until 2026-11-29 the build ran level by level (three launches a level, a binary search per
// (cell, digit)); sim/cuda/NOTES.md has both.
#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "the tree build needs sm_80 or newer (__reduce_min_sync); set CMAKE_CUDA_ARCHITECTURES"
#endif

namespace bhviz::sim::cuda {

namespace {

// Layout of ws.levelTable: levelBegin[0..kMaxLevel+1], the overflow flag, the deeper flag.
constexpr int kTableOverflow = kMaxLevel + 2;
constexpr int kTableDeeper = kMaxLevel + 3;
constexpr int kTableSize = kMaxLevel + 4;

constexpr int kTreeBlock = 256;                 // threads per block of the particle kernels
constexpr int kPerThread = 4;                   // particles a thread takes per tile
constexpr int kTile = kTreeBlock * kPerThread;  // particles a block takes at once
constexpr int kWarps = kTreeBlock / 32;
constexpr int kSlots = kPerThread * kWarps;  // (particle of the thread, warp) per tile
static_assert(kSlots == 32, "a warp scans a level's slots, a lane each");
constexpr int kMaxTreeBlocks = 1024;                // blocks of the particle kernels, at most
constexpr int kLevelRows = kMaxLevel + 2;           // a row per level, and the deeper flags
constexpr int kScanThreads = 32 * (kMaxLevel + 1);  // the level scan: a warp a level
static_assert(kMaxLevel + 1 <= 32, "a lane a level (the spans' counts, the per-level slots)");
static_assert(kMaxLevel + 1 < kTreeBlock, "a thread a level (the blocks' counts and slots)");
static_assert(kScanThreads <= 1024 && kMaxTreeBlocks % 32 == 0, "the level scan's rounds");
constexpr std::uint16_t kNoCells = 1;  // lo = 1, hi = −1: starts no cell

struct CellArrays {
  std::uint32_t* first;
  std::uint32_t* count;
  std::uint32_t* child;
  std::uint32_t* parent;  ///< the moments climb through it
  std::uint8_t* childCount;
  std::uint8_t* level;
  std::uint32_t capacity;
};

/// The contiguous chunk of particles block b takes: whole tiles, blocks in particle order.
struct Chunk {
  std::uint32_t lo, hi;
};

__device__ Chunk blockChunk(std::uint32_t n) {
  const std::uint32_t share = (n + gridDim.x - 1) / gridDim.x;
  const std::uint64_t size = (share + kTile - 1) / kTile * kTile;
  const std::uint64_t lo = std::uint64_t(blockIdx.x) * size;
  return {static_cast<std::uint32_t>(min(lo, std::uint64_t(n))),
          static_cast<std::uint32_t>(min(lo + size, std::uint64_t(n)))};
}

/// Digits (levels) two 63-bit keys share, at most `limit`.
__device__ inline int commonDigits(std::uint64_t a, std::uint64_t b, int limit) {
  const std::uint64_t x = a ^ b;
  return x == 0 ? limit : min((__clzll(static_cast<long long>(x)) - 1) / 3, limit);
}

/// The warp's minimum and maximum: one redux instruction each (sm_80 or newer; a version by
/// shuffles made writeCellsKernel spill 124 bytes and the 8 M build 19 % slower, run144).
__device__ inline int warpMin(int v) { return __reduce_min_sync(0xffffffffu, v); }
__device__ inline int warpMax(int v) { return __reduce_max_sync(0xffffffffu, v); }

__device__ inline int spanLo(std::uint16_t span) { return span & 0xFF; }
__device__ inline int spanHi(std::uint16_t span) { return (span >> 8) - 1; }

/// 1. lo and hi of every particle of the block's chunk into spans; the block's count of cells
/// starting at each level into counts[L][block], and whether a cell of level `levels` splits
/// (levels < kMaxLevel: the keys' lower digits are not sorted) into counts[kMaxLevel + 1][block].
__global__ void __launch_bounds__(kTreeBlock, 8)
    spansKernel(const std::uint64_t* __restrict__ keys, std::uint32_t n, int nLeaf, int levels,
                std::uint16_t* __restrict__ spans, std::uint32_t* __restrict__ counts) {
  // s over [tile start − N_leaf, tile end), then its maxima over doubling widths (ping-pong).
  __shared__ std::int8_t window[2][kTile + kMaxLeafSize];
  __shared__ std::uint32_t levelCount[kMaxLevel + 1];
  __shared__ int deeper;
  const Chunk chunk = blockChunk(n);
  const unsigned lane = threadIdx.x % 32;
  if (threadIdx.x <= kMaxLevel) levelCount[threadIdx.x] = 0;
  if (threadIdx.x == 0) deeper = 0;
  __syncthreads();
  // The largest power of two within the window of N_leaf + 1.
  int width = 1;
  while (2 * width <= nLeaf + 1) width *= 2;
  std::uint32_t starts = 0;  // lane L: the warp's cells of level L so far
  for (std::uint32_t tile = chunk.lo; tile < chunk.hi; tile += kTile) {
    const int tileLen = static_cast<int>(min(chunk.hi - tile, std::uint32_t(kTile)));
    const int size = tileLen + nLeaf;
    const std::int64_t base = std::int64_t(tile) - nLeaf;
    for (int x = threadIdx.x; x < size; x += kTreeBlock) {
      const std::int64_t i = base + x;
      int s = -1;
      if (i >= 0 && i + nLeaf < n) s = commonDigits(keys[i], keys[i + nLeaf], levels);
      window[0][x] = static_cast<std::int8_t>(s);
    }
    __syncthreads();
    int cur = 0;
    for (int w = 1; w < width; w *= 2) {  // window[cur][x] = max over [x, x + w)
      for (int x = threadIdx.x; x < size; x += kTreeBlock) {
        const int a = window[cur][x];
        window[1 - cur][x] =
            static_cast<std::int8_t>(x + w < size ? max(a, int(window[cur][x + w])) : a);
      }
      cur = 1 - cur;
      __syncthreads();
    }
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int j = k * kTreeBlock + static_cast<int>(threadIdx.x);
      int lo = kMaxLevel + 1, hi = -1;
      if (j < tileLen) {
        const std::uint32_t p = tile + j;
        // S(p): the maximum over [j, j + N_leaf] of the window (x = j is particle p − N_leaf).
        const int S = max(int(window[cur][j]), int(window[cur][j + nLeaf + 1 - width]));
        const int d = p == 0 ? -1 : commonDigits(keys[p - 1], keys[p], levels);
        lo = d + 1;
        hi = min(S + 1, levels);
        if (S >= levels && levels < kMaxLevel) deeper = 1;
        spans[p] = static_cast<std::uint16_t>(lo | (hi + 1) << 8);
      }
      // Counted by ballot over the warp's few levels, into lane L's count (no shared atomics on
      // the two or three levels every particle shares).
      const int from = warpMin(lo <= hi ? lo : kMaxLevel + 1);
      const int to = warpMax(hi);
      for (int L = from; L <= to; ++L) {
        const unsigned count = __popc(__ballot_sync(0xffffffffu, lo <= L && L <= hi));
        if (lane == static_cast<unsigned>(L)) starts += count;
      }
    }
    __syncthreads();  // the window is refilled by the next tile
  }
  if (lane <= kMaxLevel && starts != 0) atomicAdd(&levelCount[lane], starts);
  __syncthreads();
  if (threadIdx.x <= kMaxLevel)
    counts[threadIdx.x * kMaxTreeBlocks + blockIdx.x] = levelCount[threadIdx.x];
  if (threadIdx.x == 0) counts[(kMaxLevel + 1) * kMaxTreeBlocks + blockIdx.x] = deeper;
}

/// 2. The blocks' counts of each level scanned into each block's first slot of the level (in
/// place), a warp a level in rounds of 32 blocks; the level table; the flags. With no particles,
/// the root alone (written here).
__global__ void __launch_bounds__(kScanThreads)
    levelScanKernel(std::uint32_t blocks, std::uint32_t n, std::uint32_t* counts,
                    std::uint32_t* table, CellArrays cells) {
  constexpr int kRounds = kMaxTreeBlocks / 32;  // block b = round * 32 + lane
  __shared__ std::uint32_t levelTotal[kMaxLevel + 1];
  const unsigned lane = threadIdx.x % 32;
  const int L = static_cast<int>(threadIdx.x / 32);
  std::uint32_t* row = counts + std::size_t(L) * kMaxTreeBlocks;
  std::uint32_t v[kRounds];
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    const std::uint32_t b = r * 32 + lane;
    v[r] = b < blocks ? row[b] : 0u;
  }
  if (L == 0 && n == 0 && lane == 0) v[0] = 1;  // the empty root
  // The exclusive scan of the row, round by round (v becomes each block's offset in the level).
  std::uint32_t total = 0;
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    std::uint32_t incl = v[r];
    for (int o = 1; o < 32; o *= 2) {
      const std::uint32_t up = __shfl_up_sync(0xffffffffu, incl, o);
      if (lane >= static_cast<unsigned>(o)) incl += up;
    }
    const std::uint32_t excl = total + incl - v[r];
    total += __shfl_sync(0xffffffffu, incl, 31);
    v[r] = excl;
  }
  if (lane == 0) levelTotal[L] = total;
  // Whether a cell of the last level read splits, from any block.
  bool split = false;
  for (std::uint32_t b = threadIdx.x; b < blocks; b += kScanThreads) {
    split = split || counts[(kMaxLevel + 1) * kMaxTreeBlocks + b] != 0;
  }
  const bool deeper = __syncthreads_or(split) != 0;
  std::uint32_t begin = 0;  // the level's first cell
  for (int k = 0; k < L; ++k) begin += levelTotal[k];
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    const std::uint32_t b = r * 32 + lane;
    if (b < blocks) row[b] = begin + v[r];
  }
  if (lane == 0) table[L + 1] = begin + levelTotal[L];
  if (threadIdx.x == 0) {
    table[0] = 0;
    std::uint32_t made = 0;
    for (int k = 0; k <= kMaxLevel; ++k) made += levelTotal[k];
    table[kTableOverflow] = made > cells.capacity ? 1u : 0u;
    table[kTableDeeper] = deeper ? 1u : 0u;
    if (n == 0 && cells.capacity > 0) {
      cells.first[0] = 0;
      cells.count[0] = 0;
      cells.child[0] = 0;
      cells.parent[0] = kNoParent;
      cells.childCount[0] = 0;
      cells.level[0] = 0;
    }
  }
}

/// One past the last key that shares its first L digits (L ≥ 1) with key[in] (its run's, from
/// `in` on): a galloping search, then a binary one.
__device__ std::uint32_t runEnd(const std::uint64_t* __restrict__ keys, std::uint32_t n,
                                std::uint32_t in, int L) {
  const int shift = 3 * (kMaxLevel - L);
  const std::uint64_t prefix = keys[in] >> shift;
  std::uint32_t out = in + 1, step = 1;  // keys[in] shares the prefix; out is unknown
  while (out < n && keys[out] >> shift == prefix) {
    in = out;
    step *= 2;
    out = n - in > step ? in + step : n;
  }
  while (out - in > 1) {
    const std::uint32_t mid = in + (out - in) / 2;
    if (keys[mid] >> shift == prefix) {
      in = mid;
    } else {
      out = mid;
    }
  }
  return out;
}

/// 3. The cells each particle starts, at their slots.
__global__ void __launch_bounds__(kTreeBlock, 8)
    writeCellsKernel(std::uint32_t n, int levels, const std::uint16_t* __restrict__ spans,
                     const std::uint32_t* __restrict__ slots, const std::uint32_t* table,
                     CellArrays cells) {
  if (table[kTableOverflow] != 0 || table[kTableDeeper] != 0) return;  // built again
  __shared__ std::uint32_t next[kMaxLevel + 1];            // the block's next slot per level
  __shared__ std::uint32_t slotOf[kMaxLevel + 1][kSlots];  // counts, then first slots
  const Chunk chunk = blockChunk(n);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned below = (1u << lane) - 1u;
  if (threadIdx.x <= kMaxLevel)
    next[threadIdx.x] = slots[threadIdx.x * kMaxTreeBlocks + blockIdx.x];
  for (std::uint32_t tile = chunk.lo; tile < chunk.hi; tile += kTile) {
    int lo[kPerThread], hi[kPerThread];
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const std::uint32_t p = tile + k * kTreeBlock + threadIdx.x;
      const std::uint16_t span = p < chunk.hi ? spans[p] : kNoCells;
      lo[k] = spanLo(span);
      hi[k] = spanHi(span);
    }
    // Most particles start no cell, and a warp's starts span few levels: its range only.
    int from[kPerThread], to[kPerThread];
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      from[k] = warpMin(lo[k] <= hi[k] ? lo[k] : kMaxLevel + 1);
      to[k] = warpMax(hi[k]);
    }
    // Each warp counts in its own slots (zero outside its levels).
    if (lane <= static_cast<unsigned>(levels)) {
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) slotOf[lane][k * kWarps + warp] = 0;
    }
    __syncwarp();
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      for (int L = from[k]; L <= to[k]; ++L) {
        const unsigned starts = __ballot_sync(0xffffffffu, lo[k] <= L && L <= hi[k]);
        if (lane == 0) slotOf[L][k * kWarps + warp] = __popc(starts);
      }
    }
    __syncthreads();
    for (int L = warp; L <= levels; L += kWarps) {  // a warp a level, a lane a slot
      const std::uint32_t count = slotOf[L][lane];
      std::uint32_t sum = count;
      for (int o = 1; o < 32; o *= 2) {
        const std::uint32_t up = __shfl_up_sync(0xffffffffu, sum, o);
        if (lane >= static_cast<unsigned>(o)) sum += up;
      }
      const std::uint32_t base = next[L];
      slotOf[L][lane] = base + sum - count;
      __syncwarp();
      if (lane == 31) next[L] = base + sum;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const std::uint32_t segment = tile + k * kTreeBlock + warp * 32;  // the warp's particles
      const std::uint32_t p = segment + lane;
      // One past the warp's last particle of the chunk (the spans of later ones are not read).
      const std::uint32_t segmentEnd = min(segment + 32, chunk.hi);
      std::uint32_t above = kNoParent;  // this particle's cell one level up
      for (int L = from[k]; L <= to[k]; ++L) {
        const bool mine = lo[k] <= L && L <= hi[k];
        const unsigned starts = __ballot_sync(0xffffffffu, mine);
        // The warp's particles where a run of L digits begins: the end of a cell is the next
        // one, found here for most leaves.
        const unsigned bounds = __ballot_sync(0xffffffffu, p < segmentEnd && lo[k] <= L);
        if (!mine) continue;
        const std::uint32_t c = slotOf[L][k * kWarps + warp] + __popc(starts & below);
        // Past the warp's particles, finishCellsKernel searches (0: not known yet).
        const unsigned later = bounds & ~((2u << lane) - 1u);
        const std::uint32_t end = L == 0 ? n : later != 0 ? segment + __ffs(later) - 1 : p;
        cells.first[c] = p;
        cells.count[c] = end - p;
        cells.child[c] = 0;
        cells.childCount[c] = 0;
        cells.level[c] = static_cast<std::uint8_t>(L);
        if (L > lo[k]) {  // a first child: its parent starts here too
          cells.parent[c] = above;
          cells.child[above] = c;
        } else if (L == 0) {
          cells.parent[c] = kNoParent;
        }
        above = c;
      }
    }
    __syncthreads();  // slotOf is refilled by the next tile
  }
}

/// 4. The cells the write kernel left without a count (their run ends past their warp's
/// particles: a search over the keys, a thread a cell, with no block waiting on the longest);
/// each first child (a cell of level L ≥ 1 whose particle starts its parent too) walks its later
/// siblings (at most seven: the cells after it on its level that are no first child), gives them
/// its parent, and gives the parent the count.
__global__ void finishCellsKernel(const std::uint64_t* __restrict__ keys, std::uint32_t n,
                                  const std::uint16_t* __restrict__ spans,
                                  const std::uint32_t* table, CellArrays cells) {
  if (table[kTableOverflow] != 0 || table[kTableDeeper] != 0) return;
  const std::uint32_t total = table[kMaxLevel + 1];
  for (std::uint32_t c = 1 + blockIdx.x * blockDim.x + threadIdx.x; c < total;
       c += gridDim.x * blockDim.x) {
    const int L = cells.level[c];
    const std::uint32_t p = cells.first[c];
    if (cells.count[c] == 0) cells.count[c] = runEnd(keys, n, p, L) - p;
    if (spanLo(spans[p]) == L) continue;  // not a first child
    const std::uint32_t parent = cells.parent[c];
    const std::uint32_t levelEnd = table[L + 1];
    std::uint32_t j = c + 1;
    for (; j < levelEnd && spanLo(spans[cells.first[j]]) == L; ++j) cells.parent[j] = parent;
    cells.childCount[parent] = static_cast<std::uint8_t>(j - c);
  }
}

CellArrays cellArrays(DeviceTree& tree) {
  return {tree.first.data(),
          tree.count.data(),
          tree.child.data(),
          tree.parent.data(),
          tree.childCount.data(),
          tree.level.data(),
          static_cast<std::uint32_t>(std::min<std::size_t>(tree.capacity, 0xffffffffu))};
}

using LevelTable = std::array<std::uint32_t, kTableSize>;

/// One attempt at the build, reading `levels` digits of the keys; returns the level table
/// (levelBegin[0..kMaxLevel+1], the overflow and deeper flags).
LevelTable buildCells(BuildWorkspace& ws, std::size_t n, int nLeaf, int levels, DeviceTree& tree,
                      Stream stream) {
  const auto n32 = static_cast<std::uint32_t>(n);
  const unsigned blocks =
      static_cast<unsigned>(std::clamp<std::size_t>((n + kTile - 1) / kTile, 1, kMaxTreeBlocks));
  const CellArrays cells = cellArrays(tree);
  std::uint32_t* table = ws.levelTable.data();
  std::uint32_t* counts = ws.levelOffsets.data();
  std::uint16_t* spans = ws.cellSpans.data();
  const std::uint64_t* keys = ws.keysData();
  spansKernel<<<blocks, kTreeBlock, 0, stream>>>(keys, n32, nLeaf, levels, spans, counts);
  BHVIZ_CUDA_CHECK_LAUNCH();
  levelScanKernel<<<1, kScanThreads, 0, stream>>>(blocks, n32, counts, table, cells);
  BHVIZ_CUDA_CHECK_LAUNCH();
  writeCellsKernel<<<blocks, kTreeBlock, 0, stream>>>(n32, levels, spans, counts, table, cells);
  BHVIZ_CUDA_CHECK_LAUNCH();
  // Cells are fewer than particles and the root; a thread takes several where they are many.
  const unsigned finishBlocks =
      std::clamp<unsigned>(blocksFor(std::min(n + 1, tree.capacity)), 1u, 4096u);
  finishCellsKernel<<<finishBlocks, kBlock, 0, stream>>>(keys, n32, spans, table, cells);
  BHVIZ_CUDA_CHECK_LAUNCH();
  LevelTable h;
  std::memcpy(h.data(), readBack(ws.levelTableHost, ws.levelTable.data(), sizeof h, stream),
              sizeof h);
  return h;
}

}  // namespace

void launchTree(BuildWorkspace& ws, std::size_t n, int nLeaf, DeviceTree& tree, Stream stream) {
  // The spans kernel's window holds a tile and the N_leaf before it.
  if (nLeaf < 1 || nLeaf > kMaxLeafSize) {
    throw std::invalid_argument("launchTree: N_leaf " + std::to_string(nLeaf) + " is not in [1, " +
                                std::to_string(kMaxLeafSize) + "]");
  }
  ws.reserve(n);
  ws.levelOffsets.reserve(std::size_t{kLevelRows} * kMaxTreeBlocks);
  ws.levelTable.reserve(kTableSize);
  ws.cellSpans.reserve(std::max<std::size_t>(n, 1));
  // A first guess at the number of cells; the buffers only grow, so later steps rarely retry.
  tree.reserve(tree.firstGuess > 0 ? tree.firstGuess
                                   : std::max<std::size_t>(1024, 2 * n / std::max(1, nLeaf / 4)));
  for (;;) {
    const int levels = ws.sortedLevels;
    const LevelTable table = buildCells(ws, n, nLeaf, levels, tree, stream);
    ws.treeLevels = levels;
    if (table[kTableDeeper] != 0) {
      // A cell of the last sorted level splits: its particles' lower digits are not in order.
      launchSortKeys(ws, n, kMaxLevel, stream);
      continue;
    }
    if (table[kTableOverflow] == 0) {
      tree.levelBegin.assign({table[0], table[1]});
      for (int L = 1; L <= kMaxLevel && table[L + 1] > table[L]; ++L) {
        tree.levelBegin.push_back(table[L + 1]);
      }
      tree.cells = tree.levelBegin.back();
      return;
    }
    tree.reserve(std::max<std::size_t>(2 * tree.capacity, table[kMaxLevel + 1]));
  }
}

void launchBuild(DeviceParticles& p, Curve curve, int nLeaf, const MacSetup& mac,
                 BuildWorkspace& ws, DeviceTree& tree, Stream stream) {
  launchBoundingBox(p, ws, stream);
  launchKeys(p, curve, ws, stream);
  launchSortAndTree(p, ws, nLeaf, tree, stream);
  launchMoments(tree, p, ws, mac, stream);
}

}  // namespace bhviz::sim::cuda
