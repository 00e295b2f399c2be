// Octree topology from sorted keys, the device twin of cpu::buildTree.
//
// Breadth first, one level per iteration, with no host round trip between levels: the level
// table (levelBegin) lives on the device and every kernel reads its own range from it. A level
// L is three small launches over (cell, digit) pairs, eight threads per cell:
//   1. countChildrenKernel: for each cell with count > nLeaf, thread d binary-searches the
//      first key of the cell whose digit at level L+1 is ≥ d; child d exists when that run is
//      not empty, and keeps the search (BuildWorkspace::childStarts). Each block sums the flags
//      of its contiguous chunk of cells;
//   2. scanBlockTotalsKernel: one block scans the per-block totals and writes levelBegin[L+2];
//   3. writeChildrenKernel: each block reads the searches back (searching again only for cells
//      past the kept ones), scans its flags again (cub::BlockScan, tile by tile) on top of its
//      block offset, which gives every child its slot, and writes the children. (It made the
//      searches again until 2026-11-27: half of a level's time at 8 M particles.)
// Flags are scanned in (cell, digit) order, so children are appended in parent order and in
// digit order: exactly the CPU's cell order. The 1 + 3 K launches are replayed from a CUDA graph
// (TreeLevelGraph), one host call per build. K, the levels launched, follows the last tree's
// depth with a margin (treeLevelsToLaunch): kMaxLevel = 21 levels would leave a 1 M Plummer tree's
// last ~7 as empty launches. A tree found deeper than K (its level K not empty) is built again
// with every level. The cell buffers are sized by an estimate; a write past their end sets a flag,
// and the build is repeated with larger buffers (rare: the buffers keep their size between steps).
#include <algorithm>
#include <cstring>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"

namespace bhviz::sim::cuda {

namespace {

// Layout of ws.levelTable: levelBegin[0..kMaxLevel+1], then the overflow flag.
constexpr int kTableOverflow = kMaxLevel + 2;
constexpr int kTableSize = kMaxLevel + 3;

constexpr int kTreeBlock = 256;                     // threads per block
constexpr int kLanes = 8;                           // threads per cell, one per digit
constexpr int kCellsPerTile = kTreeBlock / kLanes;  // cells a block handles at once
constexpr int kMaxTreeBlocks = 1024;                // also the block size of the total scan

struct CellArrays {
  std::uint32_t* first;
  std::uint32_t* count;
  std::uint32_t* child;
  std::uint32_t* parent;  ///< written with each child (the moments climb through it)
  std::uint8_t* childCount;
  std::uint8_t* level;
  std::uint32_t capacity;
  /// Per (cell of the level, digit): the first index of the child run, kept by the count kernel
  /// for the write kernel, for the level's first `startCells` cells (BuildWorkspace::childStarts).
  std::uint32_t* starts;
  std::uint32_t startCells;
};

/// The contiguous chunk of level L's cells that this block handles (a multiple of the tile).
struct Chunk {
  std::uint32_t lo, hi;
};

__device__ Chunk blockChunk(const std::uint32_t* table, int L, std::uint32_t capacity) {
  const std::uint32_t begin = table[L];
  const std::uint32_t end = min(table[L + 1], capacity);
  const std::uint32_t size = end > begin ? end - begin : 0u;
  std::uint32_t chunk = (size + gridDim.x - 1) / gridDim.x;
  chunk = (chunk + kCellsPerTile - 1) / kCellsPerTile * kCellsPerTile;
  const std::uint64_t lo = begin + std::uint64_t(blockIdx.x) * chunk;
  return {static_cast<std::uint32_t>(min(lo, std::uint64_t(end))),
          static_cast<std::uint32_t>(min(lo + chunk, std::uint64_t(end)))};
}

/// One (cell, digit) pair: whether child `digit` of the cell exists, and its particle run.
/// Called by all 32 lanes of a warp together (it shuffles within groups of 8 lanes).
struct ChildRun {
  bool exists;
  std::uint32_t begin, end;
};

/// `slot`: the cell's index in its level, its entry in cells.starts where slot < startCells.
/// `keep` (the count kernel): the search is made and stored there; else (the write kernel) a
/// stored search is read back, and only a cell past the stored ones is searched again.
__device__ ChildRun childRun(const std::uint64_t* __restrict__ keys, const CellArrays& cells,
                             std::uint32_t c, bool valid, unsigned digit, int L,
                             std::uint32_t nLeaf, std::uint32_t slot, bool keep) {
  std::uint32_t lo = 0, hi = 0;
  bool split = false;
  if (valid) {
    lo = cells.first[c];
    const std::uint32_t n = cells.count[c];
    hi = lo + n;
    split = n > nLeaf;
  }
  const bool stored = valid && split && digit > 0 && slot < cells.startCells;
  const std::size_t entry = std::size_t(slot) * kLanes + digit;  // read or written when stored
  // First index of the cell whose digit is ≥ `digit` (the keys of a cell share their digits
  // above level L+1, so the digit is non-decreasing over the cell).
  std::uint32_t a = lo, b = hi;
  if (stored && !keep) {
    a = cells.starts[entry];
  } else if (split && digit > 0) {
    while (a < b) {
      const std::uint32_t mid = a + (b - a) / 2;
      if (keyDigit(keys[mid], L + 1) < digit) {
        a = mid + 1;
      } else {
        b = mid;
      }
    }
    if (stored) cells.starts[entry] = a;
  }
  std::uint32_t next = __shfl_down_sync(0xffffffffu, a, 1, kLanes);
  if (digit == kLanes - 1) next = hi;
  return {split && next > a, a, next};
}

__global__ void treeRootKernel(std::uint32_t n, CellArrays cells, std::uint32_t* table) {
  const int t = threadIdx.x;
  if (t < kTableSize) table[t] = t == 0 ? 0u : t == kTableOverflow ? 0u : 1u;
  if (t == 0) {
    cells.first[0] = 0;
    cells.count[0] = n;
    cells.child[0] = 0;
    cells.parent[0] = kNoParent;
    cells.childCount[0] = 0;
    cells.level[0] = 0;
  }
}

__global__ void __launch_bounds__(kTreeBlock)
    countChildrenKernel(int L, const std::uint64_t* __restrict__ keys, std::uint32_t nLeaf,
                        const std::uint32_t* __restrict__ table, CellArrays cells,
                        std::uint32_t* __restrict__ blockTotals) {
  using Reduce = cub::BlockReduce<std::uint32_t, kTreeBlock>;
  __shared__ typename Reduce::TempStorage temp;
  const Chunk chunk = blockChunk(table, L, cells.capacity);
  const std::uint32_t levelStart = table[L];
  const unsigned digit = threadIdx.x % kLanes;
  const unsigned lane = threadIdx.x % 32;
  std::uint32_t flags = 0;
  for (std::uint32_t t = chunk.lo; t < chunk.hi; t += kCellsPerTile) {
    const std::uint32_t c = t + threadIdx.x / kLanes;
    const ChildRun run =
        childRun(keys, cells, c, c < chunk.hi, digit, L, nLeaf, c - levelStart, true);
    const unsigned group = (__ballot_sync(0xffffffffu, run.exists) >> (lane & ~7u)) & 0xFFu;
    if (digit == 0 && c < chunk.hi) cells.childCount[c] = static_cast<std::uint8_t>(__popc(group));
    flags += run.exists ? 1u : 0u;
  }
  const std::uint32_t total = Reduce(temp).Sum(flags);
  if (threadIdx.x == 0) blockTotals[blockIdx.x] = total;
}

/// Exclusive scan of the per-block child totals in place; writes levelBegin[L+2].
__global__ void __launch_bounds__(kMaxTreeBlocks)
    scanBlockTotalsKernel(int L, std::uint32_t blocks, std::uint32_t* offsets,
                          std::uint32_t* table) {
  using Scan = cub::BlockScan<std::uint32_t, kMaxTreeBlocks>;
  __shared__ typename Scan::TempStorage temp;
  const std::uint32_t v = threadIdx.x < blocks ? offsets[threadIdx.x] : 0u;
  std::uint32_t excl = 0, total = 0;
  Scan(temp).ExclusiveSum(v, excl, total);
  if (threadIdx.x < blocks) offsets[threadIdx.x] = excl;
  if (threadIdx.x == 0) table[L + 2] = table[L + 1] + total;
}

__global__ void __launch_bounds__(kTreeBlock)
    writeChildrenKernel(int L, const std::uint64_t* __restrict__ keys, std::uint32_t nLeaf,
                        const std::uint32_t* __restrict__ offsets, std::uint32_t* table,
                        CellArrays cells) {
  using Scan = cub::BlockScan<std::uint32_t, kTreeBlock>;
  __shared__ typename Scan::TempStorage temp;
  const Chunk chunk = blockChunk(table, L, cells.capacity);
  const std::uint32_t levelStart = table[L];
  const unsigned digit = threadIdx.x % kLanes;
  const unsigned lane = threadIdx.x % 32;
  std::uint32_t next = table[L + 1] + offsets[blockIdx.x];  // slot of this tile's first child
  for (std::uint32_t t = chunk.lo; t < chunk.hi; t += kCellsPerTile) {
    const std::uint32_t c = t + threadIdx.x / kLanes;
    const ChildRun run =
        childRun(keys, cells, c, c < chunk.hi, digit, L, nLeaf, c - levelStart, false);
    const unsigned group = (__ballot_sync(0xffffffffu, run.exists) >> (lane & ~7u)) & 0xFFu;
    std::uint32_t excl = 0, tileTotal = 0;
    Scan(temp).ExclusiveSum(run.exists ? 1u : 0u, excl, tileTotal);
    const std::uint32_t k = next + excl;
    // Lane 0's prefix counts the children of the cells before this one: the first child.
    if (digit == 0 && c < chunk.hi) cells.child[c] = group != 0 ? k : 0u;
    if (run.exists) {
      if (k < cells.capacity) {
        cells.first[k] = run.begin;
        cells.count[k] = run.end - run.begin;
        cells.child[k] = 0;
        cells.parent[k] = c;
        cells.childCount[k] = 0;
        cells.level[k] = static_cast<std::uint8_t>(L + 1);
      } else {
        table[kTableOverflow] = 1;
      }
    }
    next += tileTotal;
    __syncthreads();  // the scan's shared storage is reused by the next tile
  }
}

CellArrays cellArrays(DeviceTree& tree, BuildWorkspace& ws) {
  return {tree.first.data(),
          tree.count.data(),
          tree.child.data(),
          tree.parent.data(),
          tree.childCount.data(),
          tree.level.data(),
          static_cast<std::uint32_t>(tree.capacity),
          ws.childStarts.data(),
          static_cast<std::uint32_t>(ws.childStarts.capacity() / kLanes)};
}

/// The launches of one attempt at the build: the root, then three per level for `levels` levels
/// (most of them tiny), which make the cells of levels 1 to `levels`.
void launchLevels(BuildWorkspace& ws, std::size_t n, int nLeaf, int levels, const CellArrays& cells,
                  std::size_t capacity, Stream stream) {
  std::uint32_t* table = ws.levelTable.data();
  const std::uint64_t* keys = ws.keysData();
  const auto nLeaf32 = static_cast<std::uint32_t>(nLeaf);
  treeRootKernel<<<1, 32, 0, stream>>>(static_cast<std::uint32_t>(n), cells, table);
  BHVIZ_CUDA_CHECK_LAUNCH();

  std::size_t levelBound = 1;  // most cells level L can have: min(8^L, n, capacity)
  for (int L = 0; L < levels; ++L) {
    const unsigned blocks = static_cast<unsigned>(std::clamp<std::size_t>(
        (levelBound + kCellsPerTile - 1) / kCellsPerTile, 1, kMaxTreeBlocks));
    std::uint32_t* offsets = ws.levelOffsets.data();
    countChildrenKernel<<<blocks, kTreeBlock, 0, stream>>>(L, keys, nLeaf32, table, cells, offsets);
    BHVIZ_CUDA_CHECK_LAUNCH();
    scanBlockTotalsKernel<<<1, kMaxTreeBlocks, 0, stream>>>(L, blocks, offsets, table);
    BHVIZ_CUDA_CHECK_LAUNCH();
    writeChildrenKernel<<<blocks, kTreeBlock, 0, stream>>>(L, keys, nLeaf32, offsets, table, cells);
    BHVIZ_CUDA_CHECK_LAUNCH();
    levelBound = std::min({levelBound * 8, std::max<std::size_t>(n, 1), capacity});
  }
}

}  // namespace

/// launchLevels captured into a CUDA graph. The host issues one graph launch instead of
/// 1 + 3 K kernel launches, so it no longer paces the many tiny upper-level kernels.
/// Every argument of the captured launches is in `key`; a build with other arguments captures
/// again (in a simulation: when N, the cell buffers or the levels launched change).
struct TreeLevelGraph {
  struct Key {
    std::size_t n = 0, capacity = 0;
    int nLeaf = 0, levels = 0;
    const void* keys = nullptr;
    const void* table = nullptr;
    const void* offsets = nullptr;
    CellArrays cells{};
    bool operator==(const Key& o) const {
      return n == o.n && capacity == o.capacity && nLeaf == o.nLeaf && levels == o.levels &&
             keys == o.keys && table == o.table && offsets == o.offsets &&
             cells.first == o.cells.first && cells.count == o.cells.count &&
             cells.child == o.cells.child && cells.parent == o.cells.parent &&
             cells.childCount == o.cells.childCount && cells.level == o.cells.level &&
             cells.capacity == o.cells.capacity && cells.starts == o.cells.starts &&
             cells.startCells == o.cells.startCells;
    }
  };
  Key key;
  cudaGraphExec_t exec = nullptr;

  TreeLevelGraph() = default;
  TreeLevelGraph(const TreeLevelGraph&) = delete;
  TreeLevelGraph& operator=(const TreeLevelGraph&) = delete;
  ~TreeLevelGraph() {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
  }
};

namespace {

/// Runs launchLevels through one of ws.treeGraphs (the tuned levels', or every level's),
/// capturing it first when the arguments changed.
void launchLevelsGraph(BuildWorkspace& ws, std::size_t n, int nLeaf, int levels, DeviceTree& tree,
                       Stream stream) {
  const CellArrays cells = cellArrays(tree, ws);
  const TreeLevelGraph::Key key{n,
                                tree.capacity,
                                nLeaf,
                                levels,
                                ws.keysData(),
                                ws.levelTable.data(),
                                ws.levelOffsets.data(),
                                cells};
  std::shared_ptr<TreeLevelGraph>& slot = ws.treeGraphs[levels == kMaxLevel ? 1 : 0];
  if (!slot || !(slot->key == key)) {
    auto graph = std::make_shared<TreeLevelGraph>();
    graph->key = key;
    // Thread-local capture: another host thread's backend (the accuracy meter's) may be
    // launching work meanwhile, which a global capture would forbid.
    BHVIZ_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t captured = nullptr;
    try {
      launchLevels(ws, n, nLeaf, levels, cells, tree.capacity, stream);
    } catch (...) {
      cudaStreamEndCapture(stream, &captured);  // ends the (invalidated) capture
      if (captured != nullptr) cudaGraphDestroy(captured);
      (void)cudaGetLastError();  // so that no later, unrelated check reports this one
      throw;
    }
    BHVIZ_CUDA_CHECK(cudaStreamEndCapture(stream, &captured));
    const cudaError_t made = cudaGraphInstantiate(&graph->exec, captured, 0);
    cudaGraphDestroy(captured);
    BHVIZ_CUDA_CHECK(made);
    slot = std::move(graph);
  }
  BHVIZ_CUDA_CHECK(cudaGraphLaunch(slot->exec, stream));
}

/// One attempt at the build; returns the level table (levelBegin[0..22], overflow flag). The
/// entries past levels + 1 keep the root kernel's 1s: where level `levels` is empty (launchTree's
/// check) the table still ends at the first entry that does not grow.
std::vector<std::uint32_t> buildLevels(BuildWorkspace& ws, std::size_t n, int nLeaf, int levels,
                                       DeviceTree& tree, Stream stream) {
  launchLevelsGraph(ws, n, nLeaf, levels, tree, stream);
  constexpr std::size_t kBytes = kTableSize * sizeof(std::uint32_t);
  std::vector<std::uint32_t> h(kTableSize);
  std::memcpy(h.data(), readBack(ws.levelTableHost, ws.levelTable.data(), kBytes, stream), kBytes);
  return h;
}

}  // namespace

int treeLevelsToLaunch(const BuildWorkspace& ws, const DeviceTree& tree) {
  const int depth = tree.depth();  // levels of the last tree (-1: none yet)
  if (depth <= 0) return kMaxLevel;
  const std::shared_ptr<TreeLevelGraph>& tuned = ws.treeGraphs[0];
  if (tuned && tuned->key.levels >= depth + 2 && tuned->key.levels <= depth + 4) {
    return tuned->key.levels;
  }
  return std::min(depth + 2, kMaxLevel);
}

void launchTree(BuildWorkspace& ws, std::size_t n, int nLeaf, DeviceTree& tree, Stream stream) {
  ws.reserve(n);
  ws.levelOffsets.reserve(kMaxTreeBlocks);
  // A first guess at the number of cells; the buffers only grow, so later steps rarely retry.
  tree.reserve(tree.firstGuess > 0 ? tree.firstGuess
                                   : std::max<std::size_t>(1024, 2 * n / std::max(1, nLeaf / 4)));
  // The count kernels keep their searches for the write kernels, for as many cells of a level as
  // the largest level of the last build had, a quarter and 1024 more (n / 16 at least): 32 bytes
  // a cell. (The buffer grows by at least half when it grows.)
  std::size_t largest = n / 16;
  for (std::size_t L = 1; L < tree.levelBegin.size(); ++L) {
    largest = std::max<std::size_t>(largest, tree.levelBegin[L] - tree.levelBegin[L - 1]);
  }
  ws.childStarts.reserve(kLanes * (largest + largest / 4 + 1024));
  int levels = treeLevelsToLaunch(ws, tree);
  for (;;) {
    // The keys must be sorted on every digit the levels read (launchSortAndTree sorts those only).
    if (levels > ws.sortedLevels) launchSortKeys(ws, n, kMaxLevel, stream);
    const std::vector<std::uint32_t> table = buildLevels(ws, n, nLeaf, levels, tree, stream);
    ws.treeLevels = levels;
    if (table[kTableOverflow] == 0 && levels < kMaxLevel && table[levels + 1] > table[levels]) {
      levels = kMaxLevel;  // its level `levels` has cells that may split: deeper than launched
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
    tree.reserve(std::max<std::size_t>(2 * tree.capacity, table[levels + 1]));
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
