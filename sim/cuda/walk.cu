// The tree walk on the device, the twin of cpu::walkGroups.
//
// One warp per group (GOTHIC §2.3, Bonsai): each lane holds up to kTargets of the group's
// particles in registers (target t of lane l is particle first + l + 32 t). The warp walks the
// tree once for the whole group with a cell stack whose top (kWalkSharedStack entries) lives in
// shared memory and whose bottom spills to global memory, popping up to 32 cells at a time, one
// per lane, and testing each with the CPU's mustOpen against the group's box. A cell test reads
// 32 bytes of the cell's packed record (WalkCell: COM and mass, opening value, reach², child or
// particle range); the exact box-overlap test, which needs the tight box, runs only for the
// rare cells the MAC accepts within their reach (d² ≤ reach²), with the same result:
//   - accepted cells go to a ring of 64 multipoles in shared memory (ballot + popc prefix), or,
//     those far or light enough (WalkSettings::expansion; expands()
//     in sim/common/local_expansion.h), to a ring of 64 cell indices: every 32 of these the warp
//     expands them about the group's centre, a cell per lane (m2l), and sums the 32 expansions
//     term by term across the lanes (reduceScatter: lane k keeps term k); at the group's end
//     every lane gathers the 20 terms and evaluates them at its targets (l2p), ~10 warp
//     instructions a cell instead of an M2P per target (~58 at 46 targets);
//   - opened leaves put their particles into a ring of 64 sources in shared memory (a warp
//     prefix sum of their counts; any leaf size, so deepest-level piles of duplicates too);
//   - opened internal cells push their children onto the stack.
// Whenever a ring holds ≥ 32 entries the warp flushes 32 of them (m2pQuadrupole / p2p from
// gravity.h, fp32), reading the sources from shared memory. Groups mostly hold fewer particles
// than the warp's 32 kTargets slots (46 on average at N_group = 64), so the targets beyond the
// full rows of 32 are replicated over the idle slots and the copies split every flush's sources
// between them (Targets); their partial sums are added at the end. The remainders are flushed
// last.
//
// The stack bound. Cells on the stack have non-decreasing levels from bottom to top (the
// children of the popped top entries are one level deeper than the shallowest popped cell,
// and everything below it is at most that level). So when level-L cells are pushed, every
// level-L cell already there lay above a popped level-(L−1) cell and was popped with it: a
// level never holds more than one push, 32 × 8 = 256 cells. With levels 1..kMaxLevel that is
// at most 1 + 256 kMaxLevel cells; kStackCapacity is above it. The overflow flag is a guard
// against a broken invariant, never silent: downloadCounters throws on it, and so does the
// backend when it reads the counters (CounterReadback::collect, at the substep's end).
//
// A persistent grid: as many warps as are resident at once, each taking groups from an atomic
// counter (groups differ widely in cost, so static scheduling would leave warps idle), the groups
// of most expected work first (WalkSchedule: their targets' last measured work), so that the grid
// ends on short groups.
//
// Fewer groups than two per warp (a block substep whose few active particles sit in the centre,
// or a small N): many warps would idle while the rest walk their last group, so each group's
// targets are split into `parts` balanced runs (enough for two parts per warp, rounded up, up to
// kMaxParts), each walked by its own warp against the whole group's box and |a_old| minimum.
// Every target so meets the same cells as unsplit, and the same interaction counts; only the
// order of its sums changes (fp32). `parts` depends on the grid's size, so the forces' bits
// depend on the GPU's SM count and the kernel's occupancy (test_cuda_determinism).
// On M31 1 M with block steps the deepest substeps' walks (25 k targets in ~660 groups of ~39,
// on 3696 warps of an H200) took 0.98 ms each, 38 ns a target against 3.2 where the groups fill
// the warps; split (then to the nearest warps per group), 0.43 ms (docs/BENCHMARKS.md). The
// nearest left ~2,850 groups (131 k particles) or the 5,160 of M31 2²³'s centre unsplit, one
// full wave and a part of another; two waves of parts took the full step's walk at 131 k from
// 1.59 to 1.10 ms (Plummer; merger 1.40 to 0.89) and the M31 block runs 2-8 % lower, at a cost
// of 4-11 % on Plummer 65 k (sim/cuda/NOTES.md has the four rules tried). Under the acceleration
// MAC a block substep's few groups arrive cut into runs (sim/common/group_runs.h: each its own
// box, the same on the CPU), which are not split again: a part walks its group's whole list, so
// splitting a run of ~5 targets would walk that list twice for little evaluation saved.
//
// The rings, the target slots and the flush are in walk_flush.cuh; the traversal, the kernel and
// its launch here; the counters' way to the host in walk_counters.cu.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/common/gravity.h"
#include "sim/common/group_runs.h"
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/walk.h"
#include "sim/cuda/walk_flush.cuh"

namespace bhviz::sim::cuda {

namespace {

struct WalkArgs {
  // tree
  const WalkCell* __restrict__ cells;
  const Box* __restrict__ box;  // the exact overlap test, where the reach cannot rule it out
  // groups
  const std::uint32_t* __restrict__ targetFirst;  // a group's targets: [first, first + count)
  const std::uint32_t* __restrict__ targetCount;  // of `targets`
  const std::uint32_t* __restrict__ targets;      // particle indices; null: target k is particle k
  const Box* __restrict__ groupBox;
  const float* __restrict__ groupAccMin;
  const std::uint32_t* __restrict__ expandAs;  // the targets deciding a group's expansion
  const std::uint32_t* __restrict__ groups;
  const std::uint32_t* __restrict__ cut;    // nonzero: groups cut into runs; null: none can be
  const std::uint32_t* __restrict__ order;  // walk order of the group indices
  // particles
  const Vec4* __restrict__ posMass;  // the targets
  const Vec4* __restrict__ sources;  // the tree's particles: posMass, or an imported LET's
  Vec4* __restrict__ accPot;
  bool add;                          // add to accPot (a second tree's share) instead of writing
  bool potentialOnly;                // write w alone (WalkOutput::potentialOnly)
  bool nearField;                    // false: opened leaves skipped (WalkSettings::nearField)
  NearLeaves near;                   // keys non-null: opened leaves recorded (WalkOutput)
  std::uint32_t* __restrict__ work;  // per particle: += its group's interactions; may be null
  MacSetup mac;
  float eps2;
  // Which cells are expanded (WalkSettings::expansion).
  ExpansionRule expansion;
  unsigned stackMask;  // shared stack entries in use − 1
  std::uint32_t* __restrict__ stack;
  WalkCounters* counters;
  unsigned maxParts;  // WalkSettings::maxParts, or kMaxParts
};

/// Runs a group's targets are split into where warps would idle: enough for two parts per warp,
/// rounded up, within [1, maxParts] (M31 1 M: 2189 groups on 3696 warps took 13 ns a target
/// unsplit, against 3.2 with every warp busy). The same in every warp of a walk.
__device__ inline std::uint32_t partsPerGroup(std::uint32_t groups, std::uint32_t warps,
                                              unsigned maxParts) {
  if (groups == 0) return 1;
  const std::uint32_t twoWaves = (2 * warps + groups - 1) / groups;
  return max(1u, min(static_cast<std::uint32_t>(maxParts), twoWaves));
}

/// Ring positions of one warp (the same in every lane).
struct Rings {
  unsigned cellHead = 0, cellTail = 0, partHead = 0, partTail = 0, farHead = 0, farTail = 0;
  unsigned long long cells = 0, particles = 0;  // interactions per target of this group
  unsigned long long expanded = 0;              // of `cells`, those in the group's expansion
  unsigned peak = 0, spilled = 0;               // deepest stack, entries moved to global memory
};

/// One warp's totals over its groups, kept by lane 0 in shared memory rather than in registers
/// live across the whole kernel.
struct WarpTotals {
  unsigned long long cells, particles, expanded, targets, spilled, start, end;
  unsigned peak;
};

/// Puts the particles of the leaves opened by this warp step into the source ring, flushing
/// every 32.
template <int kTargets, bool kPot>
__device__ __forceinline__ void appendLeaves(const WalkArgs& a, WarpShared& sh, bool openLeaf,
                                             std::uint32_t leafFirst, std::uint32_t leafCount,
                                             unsigned lane, Rings& r, Targets<kTargets>& t) {
  const std::uint32_t n = openLeaf ? leafCount : 0u;
  const std::uint32_t incl = inclusiveWarpSum(n, lane);
  const std::uint32_t total = __shfl_sync(kFull, incl, 31);
  __syncwarp();  // the previous step's searches are done
  sh.r.leafEnd[lane] = incl;
  sh.r.leafBase[lane] = (openLeaf ? leafFirst : 0u) - (incl - n);
  __syncwarp();
  r.particles += total;
  for (std::uint32_t base = 0; base < total; base += 32) {
    const std::uint32_t j = base + lane;
    Vec4 source;
    if (j < total) {
      unsigned leaf = 0;  // the first lane whose inclusive prefix exceeds j
#pragma unroll
      for (unsigned step = 16; step > 0; step >>= 1) {
        if (sh.r.leafEnd[leaf + step - 1] <= j) leaf += step;
      }
      source = a.sources[sh.r.leafBase[leaf] + j];
    }
    // The flush of what is pending overlaps the loads just issued; then < 32 are pending, and
    // the 32 new slots do not reach them.
    if (r.partTail - r.partHead >= 32) {
      flush<ParticleSources<kPot>>(sh, r.partHead, 32, a.eps2, t);
      r.partHead += 32;
    }
    if (j < total) sh.r.source[(r.partTail + lane) % kRing] = source;
    r.partTail += min(32u, total - base);
  }
}

/// Records the leaves opened by this warp step as keys of group `groupKey` (WalkOutput::
/// nearLeaves) and counts their particles as appendLeaves would evaluate them.
__device__ __forceinline__ void recordLeaves(const WalkArgs& a, std::uint64_t groupKey,
                                             bool openLeaf, std::uint32_t leaf,
                                             std::uint32_t leafCount, unsigned lane, Rings& r) {
  const unsigned mask = __ballot_sync(kFull, openLeaf);
  unsigned long long base = 0;
  if (lane == 0) base = atomicAdd(a.near.count, static_cast<unsigned long long>(__popc(mask)));
  base = __shfl_sync(kFull, base, 0);
  if (openLeaf) {
    const unsigned long long at = base + lanesBelow(mask, lane);
    if (at < a.near.capacity) a.near.keys[at] = groupKey | leaf;
  }
  const std::uint32_t incl = inclusiveWarpSum(openLeaf ? leafCount : 0u, lane);
  r.particles += __shfl_sync(kFull, incl, 31);
}

/// What the walk reads of a popped cell: the first 32 bytes of its record (two 16-byte loads).
struct Popped {
  Vec4 comMass;
  std::uint32_t link = 0, span = 0;
  bool open = false;
};

__device__ __forceinline__ void loadCell(const WalkArgs& a, std::uint32_t c, Popped& p,
                                         float& opening, float& reach2) {
  const WalkCell* w = a.cells + c;
  p.comMass = w->comMass;
  const uint4 t = *reinterpret_cast<const uint4*>(&w->opening);
  opening = __uint_as_float(t.x);
  reach2 = __uint_as_float(t.y);
  p.link = t.z;
  p.span = t.w;
}

/// The MAC on a loaded cell; needBox when only the exact overlap test can decide.
__device__ __forceinline__ void testCell(const WalkArgs& a, const Box& gbox, float accMin,
                                         float opening, float reach2, Popped& p, bool& needBox) {
  const float d2 = distSqPointBox(xyz(p.comMass), gbox);
  p.open = mustOpen(a.mac.code, opening, d2, accMin, false);
  needBox = !p.open && !(d2 > reach2);
}

/// Puts the cells this warp step accepted into the multipole ring, or, those far enough, into
/// the far ring; flushes every 32 of either.
template <int kTargets, bool kQuad, bool kPot>
__device__ __forceinline__ void appendCells(const WalkArgs& a, WarpShared& sh, bool accept,
                                            std::uint32_t c, const Popped& p,
                                            const ExpansionCentre& e, unsigned lane, Rings& r,
                                            Targets<kTargets>& t, float& term) {
  const bool expand = accept && expands(e, p.comMass);
  const unsigned farMask = __ballot_sync(kFull, expand);
  if (farMask != 0) {
    if (expand) sh.r.far[(r.farTail + lanesBelow(farMask, lane)) % kRing] = c;
    r.farTail += __popc(farMask);
    r.cells += __popc(farMask);
    r.expanded += __popc(farMask);
    if (r.farTail - r.farHead >= 32) {
      flushFar<kQuad, kPot>(sh, a.cells, r.farHead, 32, e.centre, a.eps2, lane, term);
      r.farHead += 32;
    }
    accept = accept && !expand;
  }
  const unsigned mask = __ballot_sync(kFull, accept);
  if (accept) {
    CellSlot& slot = sh.r.cell[(r.cellTail + lanesBelow(mask, lane)) % kRing];
    slot.comMass = p.comMass;
    if (kQuad) {
      // Only accepted cells load it, after the test (loading it with the test was slower).
      const Vec4 tail = a.cells[c].quadTail;
      slot.quadHead = a.cells[c].quadHead;
      slot.quadTail = {tail.x, tail.y, -tail.z * a.eps2, 0.0f};  // tr Q → softTrace
    }
  }
  r.cellTail += __popc(mask);
  r.cells += __popc(mask);
  if (r.cellTail - r.cellHead >= 32) {
    flush<CellSources<kQuad, kPot>>(sh, r.cellHead, 32, a.eps2, t);
    r.cellHead += 32;
  }
}

/// Walks the tree for one group and sums its forces into t. Returns false on a stack overflow.
/// Stack positions [base, top) are in shared memory (position p at p & stackMask), [0, base) in
/// global memory; a push that would hold more than stackMask + 1 entries in shared memory first
/// moves the oldest ones down. stackMask + 1 ≥ 256 ≥ one push, so only entries already below
/// the new top ever move.
template <int kTargets, bool kQuad, bool kPot, bool kRecord>
__device__ __forceinline__ bool walkTree(const WalkArgs& a, const Box& gbox, float accMin,
                                         const ExpansionCentre& e, std::uint64_t groupKey,
                                         WarpShared& sh, std::uint32_t* stack, unsigned lane,
                                         Rings& r, Targets<kTargets>& t, float& term) {
  std::uint32_t* shStack = sh.r.stack;
  if (lane == 0) shStack[0] = 0;  // the root
  std::uint32_t top = 1, base = 0;
  __syncwarp();
  while (top > 0) {
    const std::uint32_t take = min(top, 32u);
    top -= take;
    const bool valid = lane < take;
    const std::uint32_t pos = top + lane;
    std::uint32_t c = 0;
    if (valid) c = pos >= base ? shStack[pos & a.stackMask] : stack[pos];
    base = min(base, top);
    __syncwarp();  // popped before the pushes below overwrite the slots
    Popped p;
    float opening = 0.0f, reach2 = 0.0f;
    bool needBox = false;
    if (valid) {
      loadCell(a, c, p, opening, reach2);
      testCell(a, gbox, accMin, opening, reach2, p, needBox);
    }
    if (__any_sync(kFull, needBox)) {
      if (needBox) p.open = overlaps(a.box[c], gbox);
    }
    appendCells<kTargets, kQuad, kPot>(a, sh, valid && !p.open, c, p, e, lane, r, t, term);
    const unsigned children = p.span & 15u;
    const bool openLeaf = p.open && children == 0;
    if (a.nearField && __any_sync(kFull, openLeaf)) {
      if constexpr (kRecord) {
        recordLeaves(a, groupKey, openLeaf, c, p.span >> 4, lane, r);
      } else {
        appendLeaves<kTargets, kPot>(a, sh, openLeaf, p.link, p.span >> 4, lane, r, t);
      }
    }

    const std::uint32_t push = p.open ? children : 0u;
    const std::uint32_t incl = inclusiveWarpSum(push, lane);
    const std::uint32_t total = __shfl_sync(kFull, incl, 31);
    if (top + total > kStackCapacity) return false;
    const std::uint32_t held = top + total - base;
    if (held > a.stackMask + 1) {
      const std::uint32_t spill = held - (a.stackMask + 1);
      for (std::uint32_t k = lane; k < spill; k += 32) {
        stack[base + k] = shStack[(base + k) & a.stackMask];
      }
      base += spill;
      r.spilled += spill;
      __syncwarp();  // moved before the pushes reuse the slots
    }
    const std::uint32_t dst = top + incl - push;
    for (std::uint32_t k = 0; k < push; ++k) shStack[(dst + k) & a.stackMask] = p.link + k;
    top += total;
    r.peak = max(r.peak, top);
    __syncwarp();  // pushed before the next pop
  }
  if (r.farTail != r.farHead) {  // < 32 left
    flushFar<kQuad, kPot>(sh, a.cells, r.farHead, r.farTail - r.farHead, e.centre, a.eps2, lane,
                          term);
  }
  if (r.cellTail != r.cellHead) {  // < 32 left
    flush<CellSources<kQuad, kPot>>(sh, r.cellHead, r.cellTail - r.cellHead, a.eps2, t);
  }
  while (r.partTail != r.partHead) {  // < 64 left
    const unsigned num = min(r.partTail - r.partHead, 32u);
    flush<ParticleSources<kPot>>(sh, r.partHead, num, a.eps2, t);
    r.partHead += num;
  }
  return true;
}

__device__ inline unsigned long long globalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

/// Resident blocks asked of ptxas: 6 (80 registers, 24 warps per SM) for one or two target slots
/// per lane, 5 for four. With the far cells' expansion (its M2L and the reduction across lanes
/// live beside the traversal's state) 7 blocks (72 registers) spilled twice as much.
template <int kTargets>
constexpr int kMinBlocks = kTargets <= 2 ? 6 : 5;

/// kRecord: the opened leaves recorded instead of evaluated (WalkOutput::nearLeaves), a kernel of
/// its own: a test for it inside the plain walk's loop cost that walk registers (its spill
/// loads 156 → 220 bytes at two target slots).
template <int kTargets, bool kQuad, bool kPot, bool kRecord>
__global__ void __launch_bounds__(kWalkBlock, kMinBlocks<kTargets>) walkKernel(WalkArgs a) {
  __shared__ WarpShared shared[kWalkWarps];
  WarpShared& sh = shared[threadIdx.x / 32];
  const unsigned lane = threadIdx.x % 32;
  const std::uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  std::uint32_t* stack = a.stack + std::size_t(warp) * kStackCapacity;
  const std::uint32_t groups = *a.groups;
  // Runs (group_runs.h) are not split again: each part would walk the run's list once more.
  const bool cut = a.cut != nullptr && *a.cut != 0;
  const std::uint32_t parts =
      cut ? 1u : partsPerGroup(groups, gridDim.x * (blockDim.x / 32), a.maxParts);
  __shared__ WarpTotals warpTotals[kWalkWarps];
  WarpTotals& total = warpTotals[threadIdx.x / 32];
  if (lane == 0) total = {0, 0, 0, 0, 0, globalTimer(), 0, 0};
  if (warp == 0 && lane == 0) a.counters->parts = parts;
  __syncwarp();
  for (;;) {
    std::uint32_t item = 0;  // a group's part: the parts of a group are consecutive
    if (lane == 0) item = atomicAdd(&a.counters->nextGroup, 1u);
    item = __shfl_sync(kFull, item, 0);
    if (item >= groups * parts) break;
    const std::uint32_t g = a.order[item / parts], part = item % parts;
    const std::uint32_t all = a.targetCount[g];
    const std::uint32_t begin = part * all / parts, end = (part + 1) * all / parts;
    const std::uint32_t first = a.targetFirst[g] + begin, n = end - begin;
    if (n == 0) continue;  // a group of fewer targets than parts
    Targets<kTargets> t;
    loadTargets(a.posMass, a.targets, first, n, lane, t);
    Rings r;
    const Box gbox = a.groupBox[g];
    // The whole group's targets decide, as on the CPU (not this part's; a run's group's).
    const ExpansionCentre e = expansionCentre(gbox, a.expandAs[g], a.expansion, a.groupAccMin[g]);
    float term = 0.0f;  // lane k: term k of the group's expansion
    const std::uint64_t groupKey = std::uint64_t(g) << a.near.leafBits;
    if (!walkTree<kTargets, kQuad, kPot, kRecord>(a, gbox, a.groupAccMin[g], e, groupKey, sh, stack,
                                                  lane, r, t, term)) {
      if (lane == 0) atomicOr(&a.counters->overflow, 1u);
      continue;
    }
    reduceCopies(sh, lane, t);
    LocalExpansion far;
    if (r.expanded > 0) far = gatherExpansion(term);
    unsigned active = 0;
#pragma unroll
    for (int i = 0; i < kTargets; ++i) {
      const std::uint32_t k = lane + 32u * i;
      const bool write = k < n;  // every target of the group gets its force
      if (write) {
        Vec4 sum = t.acc[i];
        if (r.expanded > 0) l2p<kPot>(far, t.x[i] - e.centre, sum);
        const std::uint32_t p = particleOf(a.targets, first, k);
        if (a.add) {
          const Vec4 before = a.accPot[p];
          a.accPot[p] = {before.x + sum.x, before.y + sum.y, before.z + sum.z,
                         kPot ? before.w + sum.w : before.w};
        } else if (kPot && a.potentialOnly) {
          a.accPot[p].w = sum.w;
        } else if (kPot) {
          a.accPot[p] = sum;
        } else {  // the potential the particle had stays
          a.accPot[p].x = sum.x;
          a.accPot[p].y = sum.y;
          a.accPot[p].z = sum.z;
        }
        if (a.work != nullptr) a.work[p] += r.cells + r.particles;
      }
      active += __popc(__ballot_sync(kFull, write));
    }
    if (lane == 0) {
      total.cells += r.cells * active;
      total.particles += r.particles * active;
      total.expanded += r.expanded * active;
      total.targets += active;
      total.spilled += r.spilled;
      total.peak = max(total.peak, r.peak);
      total.end = globalTimer();
    }
  }
  if (lane == 0) {
    atomicAdd(&a.counters->warps, 1u);
    const unsigned long long end = max(total.end, total.start);
    atomicMax(&a.counters->stackPeak, total.peak);
    if (total.spilled > 0) atomicAdd(&a.counters->spilled, total.spilled);
    atomicAdd(&a.counters->busyNs, end - total.start);
    atomicMax(&a.counters->startInv, ~total.start);
    atomicMax(&a.counters->endMax, end);
    atomicAdd(&a.counters->cell, total.cells);
    atomicAdd(&a.counters->particle, total.particles);
    atomicAdd(&a.counters->expanded, total.expanded);
    atomicAdd(&a.counters->targets, total.targets);
  }
}

/// Resident blocks of a kernel on the current device, which has `sms` SMs (the persistent
/// grid's size).
template <typename Kernel>
unsigned persistentBlocks(Kernel kernel, int sms) {
  int perSm = 0;
  BHVIZ_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kWalkBlock, 0));
  return static_cast<unsigned>(std::max(1, sms * perSm));
}

/// Where walkKernel<kTargets, kQuad, kPot, false>'s grid is in DeviceProperties::walkBlocks (the
/// recording kernel's, compiled under the same launch bounds, takes the same grid).
constexpr int walkKernelIndex(int targets, bool quad, bool pot) {
  return ((targets == 1 ? 0 : targets == 2 ? 1 : 2) * 2 + (quad ? 1 : 0)) * 2 + (pot ? 1 : 0);
}

template <int kTargets, bool kQuad, bool kPot>
void launchWith(const WalkArgs& args, const DeviceGroups& g, const DeviceProperties& device,
                Stream stream) {
  constexpr auto plain = walkKernel<kTargets, kQuad, kPot, false>;
  constexpr auto record = walkKernel<kTargets, kQuad, kPot, true>;
  const unsigned blocks = device.walkBlocks[walkKernelIndex(kTargets, kQuad, kPot)];
  g.walkStack.reserve(std::size_t(blocks) * kWalkWarps * kStackCapacity);
  WalkArgs a = args;
  a.stack = g.walkStack.data();
  (a.near.keys != nullptr ? record : plain)<<<blocks, kWalkBlock, 0, stream>>>(a);
  BHVIZ_CUDA_CHECK_LAUNCH();
}

template <int kTargets>
void launchFor(const WalkArgs& args, const WalkSettings& s, const DeviceGroups& g,
               const DeviceProperties& device, Stream stream) {
  if (s.quadrupole) {
    s.potential ? launchWith<kTargets, true, true>(args, g, device, stream)
                : launchWith<kTargets, true, false>(args, g, device, stream);
  } else {
    s.potential ? launchWith<kTargets, false, true>(args, g, device, stream)
                : launchWith<kTargets, false, false>(args, g, device, stream);
  }
}

template <int kTargets>
void queryFor(unsigned* blocks, int sms) {
  blocks[walkKernelIndex(kTargets, false, false)] =
      persistentBlocks(walkKernel<kTargets, false, false, false>, sms);
  blocks[walkKernelIndex(kTargets, false, true)] =
      persistentBlocks(walkKernel<kTargets, false, true, false>, sms);
  blocks[walkKernelIndex(kTargets, true, false)] =
      persistentBlocks(walkKernel<kTargets, true, false, false>, sms);
  blocks[walkKernelIndex(kTargets, true, true)] =
      persistentBlocks(walkKernel<kTargets, true, true, false>, sms);
}

}  // namespace

void queryWalkBlocks(DeviceProperties& device) {
  queryFor<1>(device.walkBlocks, device.multiProcessors);
  queryFor<2>(device.walkBlocks, device.multiProcessors);
  queryFor<4>(device.walkBlocks, device.multiProcessors);
}

void launchWalk(const DeviceTree& tree, const DeviceGroups& g, DeviceParticles& p,
                const WalkSettings& s, WalkCounters* d_counters, const DeviceProperties& device,
                Stream stream) {
  launchWalk(WalkSources{tree.walkCell.data(), tree.box.data(), tree.cells, p.posMass.data()}, g, p,
             s, WalkOutput{}, d_counters, device, stream);
}

void launchWalk(const WalkSources& tree, const DeviceGroups& g, DeviceParticles& p,
                const WalkSettings& s, const WalkOutput& out, WalkCounters* d_counters,
                const DeviceProperties& device, Stream stream) {
  if (device.ordinal < 0) {
    throw std::invalid_argument(
        "launchWalk: device properties not queried (queryDeviceProperties)");
  }
  BHVIZ_CUDA_CHECK(cudaMemsetAsync(d_counters, 0, sizeof(WalkCounters), stream));
  if (p.n == 0 || tree.count == 0) return;
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(&d_counters->groups, g.size.data(), sizeof(unsigned int),
                                   cudaMemcpyDeviceToDevice, stream));
  if (g.nGroup < 1 || g.nGroup > kMaxWalkGroup) {
    throw std::invalid_argument("launchWalk: groups built with nGroup " + std::to_string(g.nGroup) +
                                ", supported 1.." + std::to_string(kMaxWalkGroup));
  }
  const int shared = s.sharedStack == 0 ? kSharedStack : s.sharedStack;
  if (out.potentialOnly && (!s.potential || out.add)) {
    throw std::invalid_argument("launchWalk: the potential alone needs it computed and written");
  }
  if (out.nearLeaves != nullptr && (s.maxParts != 1 || out.add || out.potentialOnly)) {
    throw std::invalid_argument("launchWalk: recording the leaves needs one warp a group, written");
  }
  if (out.sampleEvery == 0) throw std::invalid_argument("launchWalk: sampleEvery 0");
  if (s.maxParts < 0 || s.maxParts > int(kMaxParts)) {
    throw std::invalid_argument("launchWalk: maxParts " + std::to_string(s.maxParts) +
                                ", supported 0.." + std::to_string(kMaxParts));
  }
  if (shared < 256 || shared > int(kSharedStack) || (shared & (shared - 1)) != 0) {
    throw std::invalid_argument("launchWalk: sharedStack " + std::to_string(s.sharedStack) +
                                ", supported 0 or a power of two in 256.." +
                                std::to_string(kSharedStack));
  }
  const GroupOrder walked = out.sampleEvery > 1
                                ? sampleGroups(g, out.sampleEvery, stream)
                                : GroupOrder{scheduleGroups(g, stream), g.size.data()};
  const WalkArgs a{tree.cells,
                   tree.box,
                   g.targetFirst.data(),
                   g.targetCount.data(),
                   g.compact ? g.targets.data() : nullptr,
                   g.box.data(),
                   g.accMin.data(),
                   g.expandAs.data(),
                   walked.count,
                   g.cutAsked ? g.cutFlag() : nullptr,
                   walked.order,
                   p.posMass.data(),
                   tree.posMass,
                   out.accPot != nullptr ? out.accPot : p.accPot.data(),
                   out.add,
                   out.potentialOnly,
                   s.nearField,
                   out.nearLeaves != nullptr ? *out.nearLeaves : NearLeaves{},
                   out.work,
                   s.mac,
                   s.softening * s.softening,
                   s.expansion,
                   unsigned(shared - 1),
                   nullptr,
                   d_counters,
                   s.maxParts == 0 ? kMaxParts : unsigned(s.maxParts)};
  const int targets = (g.nGroup + 31) / 32;
  if (targets <= 1) {
    launchFor<1>(a, s, g, device, stream);
  } else if (targets <= 2) {
    launchFor<2>(a, s, g, device, stream);
  } else {
    launchFor<4>(a, s, g, device, stream);
  }
}

}  // namespace bhviz::sim::cuda
