// Groups on the device, the twin of cpu::buildGroups, with no host round trip.
//
// The groups partition the particles into runs, so each is known by where it starts and how
// long it is. The steps:
//   1. markRunsKernel (one thread per cell) writes runLength[first] = count at the start of
//      every run: the root when it holds ≤ nGroup particles; for an internal cell holding
//      more, its children holding ≤ nGroup, consecutive ones merged greedily in key order while
//      the run stays ≤ nGroup and the union of their tight boxes overlaps no child holding
//      more; the nGroup-chunks of a leaf holding more (a leaf at the deepest
//      level, or N_leaf > N_group). Every other entry stays 0 (memset).
//   2. Where only some particles are active (block substeps), their indices are compacted in key
//      order (an exclusive scan of the active flags, then a scatter), and each group's targets
//      are its active particles only: the walk then spends its lanes on targets, replicating a
//      group's few over the idle slots (walk.cu), instead of computing along for the inactive
//      ones and discarding their sums.
//   3. cub::DeviceSelect::If over the particle indices keeps the starts of runs that hold an
//      active particle (by the scan of step 2), in index (= key) order: groups.first and
//      groups.size, on the device.
//   4. groupBoxKernel (one warp per group, grid-stride up to *size) reduces the box and the
//      smallest |a_old| over the active particles: min/max are exact, so the boxes are
//      bit-identical to the CPU's whatever the order. It also sums the work the walk may expect
//      of the group (its targets' last measured work), which orders the walk (walk_schedule.cu).
//   5. Where the caller asks (GroupRuns::Cut), only some particles are active and fewer than
//      kRunsBelow groups were made, each is cut into runs of its targets
//      (sim/common/group_runs.h, as cpu::cutIntoRuns): one block copies the groups aside and
//      scans their runs' counts (planRunsKernel), then a warp a group writes its runs in place
//      (writeRunsKernel). The number of groups stays on the device, and so does whether any was
//      cut (DeviceGroups::cutFlag, which the walk reads where the cut was asked).
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <stdexcept>
#include <string>

#include "sim/common/group_runs.h"
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/groups.h"

namespace bhviz::sim::cuda {

namespace {

struct CellTopology {
  const std::uint32_t* first;
  const std::uint32_t* count;
  const std::uint32_t* child;
  const std::uint8_t* childCount;
  const Box* box;  ///< tight boxes (moments)
};

__global__ void markRunsKernel(CellTopology t, std::uint32_t cells, std::uint32_t nGroup,
                               std::uint32_t* __restrict__ runLength) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cells) return;
  const std::uint32_t n = t.count[c];
  if (c == 0 && n <= nGroup) runLength[t.first[0]] = n;
  if (n <= nGroup) return;
  const unsigned children = t.childCount[c];
  if (children == 0) {
    const std::uint32_t end = t.first[c] + n;
    for (std::uint32_t f = t.first[c]; f < end; f += nGroup) runLength[f] = min(nGroup, end - f);
    return;
  }
  // Consecutive children holding ≤ nGroup merge greedily while the run stays ≤ nGroup and its
  // box overlaps no child holding more (as cpu::buildGroups); a larger child ends the run (its
  // own thread splits it).
  const std::uint32_t firstChild = t.child[c];
  unsigned larger = 0;  // bit j: child j holds more than nGroup (most cells have none such)
  for (unsigned j = 0; j < children; ++j)
    larger |= (t.count[firstChild + j] > nGroup ? 1u : 0u) << j;
  std::uint32_t runFirst = 0, runCount = 0;
  Box runBox;
  for (std::uint32_t k = firstChild; k < firstChild + children; ++k) {
    const std::uint32_t m = t.count[k];
    if (m <= nGroup && runCount > 0 && runCount + m <= nGroup) {
      const Box b = t.box[k];
      const Box u{
          {fminf(runBox.lo.x, b.lo.x), fminf(runBox.lo.y, b.lo.y), fminf(runBox.lo.z, b.lo.z)},
          {fmaxf(runBox.hi.x, b.hi.x), fmaxf(runBox.hi.y, b.hi.y), fmaxf(runBox.hi.z, b.hi.z)}};
      bool blocked = false;
      for (unsigned rest = larger; rest != 0 && !blocked; rest &= rest - 1) {
        blocked = overlaps(u, t.box[firstChild + __ffs(rest) - 1]);
      }
      if (!blocked) {
        runCount += m;
        runBox = u;
        continue;
      }
    }
    if (runCount > 0) runLength[runFirst] = runCount;
    runCount = 0;
    if (m <= nGroup) {
      runFirst = t.first[k];
      runCount = m;
      runBox = t.box[k];
    }
  }
  if (runCount > 0) runLength[runFirst] = runCount;
}

/// Keeps particle index i when a run starts there and holds an active particle: one with an
/// active particle before its end that is not before its start, by the exclusive scan of the
/// active flags (null: every particle is active). A loop over the run's bins here took 0.2 ms
/// per block substep at 8 M particles: every run start's thread looped over ~46 bins while the
/// few active runs were found.
struct ActiveRunStart {
  const std::uint32_t* runLength;
  const std::uint32_t* activeBefore;

  __device__ bool operator()(std::uint32_t i) const {
    const std::uint32_t len = runLength[i];
    return len != 0 && (activeBefore == nullptr || activeBefore[i + len] > activeBefore[i]);
  }
};

// Reductions over aligned segments of `width` lanes (a power of two; 32: the warp). Every lane of
// the warp calls them; xor offsets below `width` never leave a segment.
__device__ inline float warpMin(float v, unsigned width = 32) {
  for (unsigned o = width / 2; o > 0; o >>= 1) v = fminf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ inline float warpMax(float v, unsigned width = 32) {
  for (unsigned o = width / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ inline unsigned long long warpSum(unsigned long long v, unsigned width = 32) {
  for (unsigned o = width / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ inline Box warpBox(Box b, unsigned width = 32) {
  b.lo = {warpMin(b.lo.x, width), warpMin(b.lo.y, width), warpMin(b.lo.z, width)};
  b.hi = {warpMax(b.hi.x, width), warpMax(b.hi.y, width), warpMax(b.hi.z, width)};
  return b;
}

struct GroupArrays {
  std::uint32_t* first;
  std::uint32_t* count;
  Box* box;
  float* accMin;
  std::uint32_t* expandAs;
  std::uint32_t* size;
  std::uint32_t* targetFirst;
  std::uint32_t* targetCount;
  const std::uint32_t* activeBefore;  ///< null: every particle is a target
  const std::uint32_t* lastWork;      ///< per particle; null: none measured
  std::uint32_t* expected;
};

__global__ void scatterTargetsKernel(std::uint32_t n, ActiveFlag active,
                                     const std::uint32_t* __restrict__ activeBefore,
                                     std::uint32_t* __restrict__ targets) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && active(i)) targets[activeBefore[i]] = i;
}

__global__ void groupBoxKernel(GroupArrays g, const std::uint32_t* __restrict__ runLength,
                               const Vec4* __restrict__ posMass, const Vec4* __restrict__ accPot,
                               const std::uint8_t* __restrict__ bin, ActiveRule rule) {
  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t warps = gridDim.x * blockDim.x / 32;
  const std::uint32_t groups = *g.size;
  for (std::uint32_t w = (blockIdx.x * blockDim.x + threadIdx.x) / 32; w < groups; w += warps) {
    const std::uint32_t first = g.first[w];
    const std::uint32_t len = runLength[first];
    Box b;
    float amin = INFINITY;
    unsigned long long work = 0;  // the targets' last measured work, at least 1 each
    for (std::uint32_t i = first + lane; i < first + len; i += 32) {
      if (!isTarget(rule, bin[i])) continue;
      grow(b, xyz(posMass[i]));
      amin = fminf(amin, accMagnitude(accPot[i]));
      work += g.lastWork != nullptr ? max(g.lastWork[i], 1u) : 1u;
    }
    b = warpBox(b);
    amin = warpMin(amin);
    work = warpSum(work);
    if (lane == 0) {
      g.count[w] = len;
      g.box[w] = b;
      g.accMin[w] = amin;
      g.expected[w] = static_cast<std::uint32_t>(min(work, 0xffffffffull));
      const bool compact = g.activeBefore != nullptr;
      g.targetFirst[w] = compact ? g.activeBefore[first] : first;
      g.targetCount[w] = compact ? g.activeBefore[first + len] - g.activeBefore[first] : len;
      g.expandAs[w] = g.targetCount[w];
    }
  }
}

/// The groups before the cut (DeviceGroups::Uncut).
struct UncutArrays {
  std::uint32_t *first, *count, *targetFirst, *targetCount, *runStart;
  float* accMin;
};

constexpr int kPlanThreads = 1024;
constexpr int kPlanItems = int(kRunsBelow) / kPlanThreads;
static_assert(kPlanItems * kPlanThreads == int(kRunsBelow), "one block plans every cut");

/// One block: where fewer than kRunsBelow groups were made, copies them aside, writes where each
/// one's runs start (an exclusive scan of their counts) and the number of runs as the groups'
/// size; runStart[kRunsBelow] is the number of groups cut, 0 where none is (the walk's flag,
/// DeviceGroups::cutFlag).
__global__ void __launch_bounds__(kPlanThreads) planRunsKernel(GroupArrays g, UncutArrays u) {
  using Scan = cub::BlockScan<std::uint32_t, kPlanThreads>;
  __shared__ typename Scan::TempStorage temp;
  __shared__ std::uint32_t runs[kRunsBelow];  // per group: its runs, then where they start
  const std::uint32_t groups = *g.size;
  const std::uint32_t perGroup = runsPerGroup(groups);
  if (perGroup <= 1) {  // the same in every thread
    if (threadIdx.x == 0) u.runStart[kRunsBelow] = 0;
    return;
  }
  // Copied aside thread by thread (coalesced: a thread's eight consecutive groups were 8× the
  // memory transactions, 37 µs at 7,260 groups), the scan over each thread's eight in shared
  // memory.
  for (std::uint32_t w = threadIdx.x; w < kRunsBelow; w += kPlanThreads) {
    if (w >= groups) {
      runs[w] = 0;
      continue;
    }
    u.first[w] = g.first[w];
    u.count[w] = g.count[w];
    u.targetFirst[w] = g.targetFirst[w];
    u.targetCount[w] = g.targetCount[w];
    u.accMin[w] = g.accMin[w];
    runs[w] = runsOf(g.targetCount[w], perGroup);
  }
  __syncthreads();  // also: every thread has read *g.size before thread 0 writes it below
  std::uint32_t mine[kPlanItems];
  for (int j = 0; j < kPlanItems; ++j) mine[j] = runs[threadIdx.x * kPlanItems + j];
  std::uint32_t total = 0;
  Scan(temp).ExclusiveSum(mine, mine, total);
  for (int j = 0; j < kPlanItems; ++j) runs[threadIdx.x * kPlanItems + j] = mine[j];
  __syncthreads();
  for (std::uint32_t w = threadIdx.x; w < groups; w += kPlanThreads) u.runStart[w] = runs[w];
  if (threadIdx.x == 0) {
    u.runStart[kRunsBelow] = groups;
    *g.size = total;
  }
}

/// writeRunsKernel's work for group w (a warp). Its runs at once: run r takes `width` lanes (a
/// power of two, q · width ≤ 32), which stride over its targets and reduce among themselves
/// (shuffles within aligned segments of `width` lanes never mix two runs).
__device__ void writeRuns(const GroupArrays& g, const UncutArrays& u,
                          const std::uint32_t* __restrict__ targets,
                          const Vec4* __restrict__ posMass, std::uint32_t w, std::uint32_t perGroup,
                          unsigned lane) {
  static_assert(kMaxRuns <= 32, "a lane or more a run");
  const std::uint32_t m = u.targetCount[w], tf = u.targetFirst[w];
  const std::uint32_t q = runsOf(m, perGroup);
  unsigned width = 32;
  while (width * q > 32) width >>= 1;
  const std::uint32_t r = lane / width, j = lane % width;
  const bool mine = r < q;
  const std::uint32_t lo = mine ? runBegin(r, m, q) : 0, hi = mine ? runBegin(r + 1, m, q) : 0;
  Box b;
  unsigned long long work = 0;
  for (std::uint32_t t = lo + j; t < hi; t += width) {
    const std::uint32_t i = targets[tf + t];
    grow(b, xyz(posMass[i]));
    work += g.lastWork != nullptr ? max(g.lastWork[i], 1u) : 1u;
  }
  b = warpBox(b, width);
  work = warpSum(work, width);
  if (!mine || j != 0) return;
  const std::uint32_t first = u.first[w], at = u.runStart[w] + r;
  const RunParticles span = runParticles(r, q, m, first, first + u.count[w], targets + tf);
  g.first[at] = span.first;
  g.count[at] = span.end - span.first;
  g.box[at] = b;
  g.accMin[at] = u.accMin[w];
  g.expected[at] = static_cast<std::uint32_t>(min(work, 0xffffffffull));
  g.targetFirst[at] = tf + lo;
  g.targetCount[at] = hi - lo;
  g.expandAs[at] = m;  // the whole group's targets decide its runs' expansion
}

/// A warp per group cut (planRunsKernel's): writes its runs over the groups' arrays, run k of q
/// holding its targets [runBegin(k), runBegin(k + 1)) (compact: `targets` names them), with their
/// own box and expected work and the group's accMin and expansion targets, and its particles by
/// runParticles, as cpu::cutIntoRuns.
__global__ void writeRunsKernel(GroupArrays g, UncutArrays u,
                                const std::uint32_t* __restrict__ targets,
                                const Vec4* __restrict__ posMass) {
  const std::uint32_t groups = u.runStart[kRunsBelow];
  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t warps = gridDim.x * blockDim.x / 32;
  const std::uint32_t perGroup = runsPerGroup(groups);
  for (std::uint32_t w = (blockIdx.x * blockDim.x + threadIdx.x) / 32; w < groups; w += warps) {
    writeRuns(g, u, targets, posMass, w, perGroup, lane);
  }
}

/// Blocks for a grid-stride kernel: enough to fill the device, no more than the work needs.
unsigned residentBlocks(std::size_t work, int block, const DeviceProperties& device) {
  const int sms = device.multiProcessors;
  return std::max(1u, std::min(blocksFor(work, block), static_cast<unsigned>(sms * 8)));
}

}  // namespace

void DeviceGroups::reserve(std::size_t n) {
  const std::size_t m = std::max<std::size_t>(n, 1);
  first.reserve(m);
  count.reserve(m);
  targetFirst.reserve(m);
  targetCount.reserve(m);
  targets.reserve(m);
  activeBefore.reserve(m + 1);
  box.reserve(m);
  accMin.reserve(m);
  expandAs.reserve(m);
  expected.reserve(m);
  size.reserve(1);
  runLength.reserve(m);
  uncut.reserve();
  capacity = std::min({first.capacity(), count.capacity(), box.capacity(), accMin.capacity(),
                       expandAs.capacity(), targetFirst.capacity(), targetCount.capacity(),
                       expected.capacity()});
}

void DeviceGroups::poison() {
  first.poison();
  count.poison();
  targetFirst.poison();
  targetCount.poison();
  targets.poison();
  activeBefore.poison();
  box.poison();
  accMin.poison();
  expandAs.poison();
  expected.poison();
  size.poison();
  runLength.poison();
  uncut.poison();
}

void DeviceGroups::Uncut::reserve() {
  for (DeviceBuffer<std::uint32_t>* b : {&first, &count, &targetFirst, &targetCount}) {
    b->reserve(kRunsBelow);
  }
  accMin.reserve(kRunsBelow);
  runStart.reserve(kRunsBelow + 1);
}

void DeviceGroups::Uncut::poison() {
  for (DeviceBuffer<std::uint32_t>* b : {&first, &count, &targetFirst, &targetCount, &runStart}) {
    b->poison();
  }
  accMin.poison();
}

void launchGroups(const DeviceTree& tree, const DeviceParticles& p, const BuildWorkspace&,
                  ActiveRule rule, int nGroup, DeviceGroups& g, const DeviceProperties& device,
                  Stream stream, const std::uint32_t* lastWork, GroupRuns runs) {
  if (device.ordinal < 0) {
    throw std::invalid_argument(
        "launchGroups: device properties not queried (queryDeviceProperties)");
  }
  if (nGroup < 1 || nGroup > kMaxWalkGroup) {
    throw std::invalid_argument("launchGroups: nGroup must be in [1, " +
                                std::to_string(kMaxWalkGroup) + "], got " + std::to_string(nGroup));
  }
  const std::size_t n = p.n;
  g.reserve(n);
  g.nGroup = nGroup;
  // Groups ≤ cells + n / nGroup (each group is one or more cells, or a chunk of a leaf); cut
  // into runs, fewer than kRunsBelow × kMaxRuns, each with a target.
  g.bound = std::min(n, tree.cells + n / std::size_t(nGroup));
  const bool cut = runs == GroupRuns::Cut && !rule.all;
  g.cutAsked = false;  // until the plan below has written the flag
  if (cut) g.bound = std::max(g.bound, std::min<std::size_t>(n, kRunsBelow * kMaxRuns));
  if (n == 0 || tree.cells == 0) {
    BHVIZ_CUDA_CHECK(cudaMemsetAsync(g.size.data(), 0, sizeof(std::uint32_t), stream));
    return;
  }
  BHVIZ_CUDA_CHECK(cudaMemsetAsync(g.runLength.data(), 0, n * sizeof(std::uint32_t), stream));
  const CellTopology topo{tree.first.data(), tree.count.data(), tree.child.data(),
                          tree.childCount.data(), tree.box.data()};
  const auto cells = static_cast<std::uint32_t>(tree.cells);
  markRunsKernel<<<blocksFor(cells), kBlock, 0, stream>>>(topo, cells, std::uint32_t(nGroup),
                                                          g.runLength.data());
  BHVIZ_CUDA_CHECK_LAUNCH();

  // Only some particles active: their indices compacted, in key order, and counted before each
  // particle (which the runs' selection below reads too).
  const thrust::counting_iterator<std::uint32_t> indices(0);
  const int items = static_cast<int>(n);
  g.compact = !rule.all;
  if (g.compact) {
    const ActiveFlag active{p.bin.data(), rule, static_cast<std::uint32_t>(n)};
    const thrust::transform_iterator<ActiveFlag, thrust::counting_iterator<std::uint32_t>> flags(
        indices, active);
    std::size_t scanBytes = 0;
    BHVIZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scanBytes, flags, g.activeBefore.data(),
                                                   items + 1, stream));
    g.temp.reserve(scanBytes);
    scanBytes = g.temp.capacity();
    BHVIZ_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(g.temp.data(), scanBytes, flags,
                                                   g.activeBefore.data(), items + 1, stream));
    scatterTargetsKernel<<<blocksFor(n), kBlock, 0, stream>>>(
        static_cast<std::uint32_t>(n), active, g.activeBefore.data(), g.targets.data());
    BHVIZ_CUDA_CHECK_LAUNCH();
  }

  const ActiveRunStart keep{g.runLength.data(), g.compact ? g.activeBefore.data() : nullptr};
  std::size_t tempBytes = 0;
  BHVIZ_CUDA_CHECK(cub::DeviceSelect::If(nullptr, tempBytes, indices, g.first.data(), g.size.data(),
                                         items, keep, stream));
  g.temp.reserve(tempBytes);
  tempBytes = g.temp.capacity();
  BHVIZ_CUDA_CHECK(cub::DeviceSelect::If(g.temp.data(), tempBytes, indices, g.first.data(),
                                         g.size.data(), items, keep, stream));

  const GroupArrays arrays{g.first.data(),
                           g.count.data(),
                           g.box.data(),
                           g.accMin.data(),
                           g.expandAs.data(),
                           g.size.data(),
                           g.targetFirst.data(),
                           g.targetCount.data(),
                           g.compact ? g.activeBefore.data() : nullptr,
                           lastWork,
                           g.expected.data()};
  groupBoxKernel<<<residentBlocks(g.bound * 32, kBlock, device), kBlock, 0, stream>>>(
      arrays, g.runLength.data(), p.posMass.data(), p.accPot.data(), p.bin.data(), rule);
  BHVIZ_CUDA_CHECK_LAUNCH();
  if (!cut) return;
  const UncutArrays uncut{g.uncut.first.data(),       g.uncut.count.data(),
                          g.uncut.targetFirst.data(), g.uncut.targetCount.data(),
                          g.uncut.runStart.data(),    g.uncut.accMin.data()};
  planRunsKernel<<<1, kPlanThreads, 0, stream>>>(arrays, uncut);
  BHVIZ_CUDA_CHECK_LAUNCH();
  g.cutAsked = true;
  writeRunsKernel<<<residentBlocks(std::size_t(kRunsBelow) * 32, kBlock, device), kBlock, 0,
                    stream>>>(arrays, uncut, g.targets.data(), p.posMass.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
}

namespace {

constexpr int kRegionThreads = 1024;

__global__ void groupRegionKernel(const Box* __restrict__ box, const float* __restrict__ accMin,
                                  const std::uint32_t* __restrict__ size, GroupRegion* out) {
  using Reduce = cub::BlockReduce<float, kRegionThreads>;
  __shared__ typename Reduce::TempStorage temp;
  Box b;
  float a = INFINITY;
  for (std::uint32_t k = threadIdx.x; k < *size; k += kRegionThreads) {
    const Box g = box[k];
    b.lo = {fminf(b.lo.x, g.lo.x), fminf(b.lo.y, g.lo.y), fminf(b.lo.z, g.lo.z)};
    b.hi = {fmaxf(b.hi.x, g.hi.x), fmaxf(b.hi.y, g.hi.y), fmaxf(b.hi.z, g.hi.z)};
    a = fminf(a, accMin[k]);
  }
  // Seven reductions of one float each (min and max are exact: the same box in any order).
  const auto min = [](float x, float y) { return fminf(x, y); };
  const auto max = [](float x, float y) { return fmaxf(x, y); };
  float v[7] = {b.lo.x, b.lo.y, b.lo.z, b.hi.x, b.hi.y, b.hi.z, a};
  float r[7];
  for (int i = 0; i < 7; ++i) {
    r[i] = i >= 3 && i < 6 ? Reduce(temp).Reduce(v[i], max) : Reduce(temp).Reduce(v[i], min);
    __syncthreads();  // the temporary storage is reused
  }
  if (threadIdx.x == 0) *out = GroupRegion{Box{{r[0], r[1], r[2]}, {r[3], r[4], r[5]}}, r[6]};
}

}  // namespace

GroupRegion groupRegion(const DeviceGroups& g, Stream stream) {
  if (g.capacity == 0) return {};
  DeviceBuffer<GroupRegion>& out = g.region;
  out.reserve(1);
  groupRegionKernel<<<1, kRegionThreads, 0, stream>>>(g.box.data(), g.accMin.data(), g.size.data(),
                                                      out.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  GroupRegion h;
  copyToHost(&h, out.data(), sizeof h);
  return h;
}

Groups downloadGroups(const DeviceGroups& d) {
  std::uint32_t size = 0;
  copyToHost(&size, d.size.data(), sizeof(size));
  Groups h;
  h.first.resize(size);
  h.count.resize(size);
  h.box.resize(size);
  h.accMin.resize(size);
  h.expandAs.resize(size);
  copyToHost(h.first.data(), d.first.data(), size * sizeof(std::uint32_t));
  copyToHost(h.count.data(), d.count.data(), size * sizeof(std::uint32_t));
  copyToHost(h.box.data(), d.box.data(), size * sizeof(Box));
  copyToHost(h.accMin.data(), d.accMin.data(), size * sizeof(float));
  copyToHost(h.expandAs.data(), d.expandAs.data(), size * sizeof(std::uint32_t));
  return h;
}

}  // namespace bhviz::sim::cuda
