// Cell moments bottom-up, the device twin of cpu::computeMoments, in fp32.
//
// One launch for the whole tree. A warp takes 32 consecutive cells:
//   - its leaves' particles are summed by segments of four lanes, eight leaves at a time, lane j
//     reading particles first + j, first + j + 4, ... (coalesced), the sums reduced over the
//     segment by shuffles and left in shared memory;
//   - a thread a leaf then writes its leaf (coalesced writes) and counts it in its parent's
//     `arrivals` with a release (its moments are published before the count);
//   - the parents so completed are computed by segments of eight lanes, four at a time, lane j
//     reading child j (a cell has at most eight) past L1, since another SM may have written it
//     during this launch; each segment climbs on while it completes the next parent.
// A cell's sums are reduced in a fixed order whichever warp computes it, so every launch gives
// the same bits. Every read a cell needs is issued at once (its links with the warp's first
// loads, a child's four arrays together). The kernel this replaced, a thread a leaf reading its
// particles one after another and a thread a parent reading its children one after another, ran
// with ~8 of 32 lanes active and took about 1.4-1.8 times as long (sim/cuda/NOTES.md).
//
// Sums are taken about a reference point inside the cell (the first particle, or the first
// child's centre of mass), so their rounding is relative to the cell's size rather than to the
// absolute coordinates; this keeps the quadrupole of a small cell far from the origin accurate
// in fp32.
//
// bmax is a guaranteed upper bound of the distance from the stored (rounded) centre of mass to
// every particle of the cell: each fp32 distance is rounded up by 2^-20 relative, which covers
// the few rounding errors of a subtraction, a dot product and a square root.
//
// The same kernel writes the walk's packed record of the cell (WalkCell). Its reach² bounds the
// squared distance from the stored COM to every point of the stored tight box, rounded up by
// 2^-20 on the distance and 2^-17 on the square: more than the walk's own rounding of its
// box-to-COM distance (a few 2^-24), so "d² > reach²" in the walk proves that the boxes are
// disjoint and the exact overlap test can be skipped.
#include <stdexcept>

#include "sim/common/gravity.h"
#include "sim/common/mac.h"
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"

namespace bhviz::sim::cuda {

namespace {

constexpr float kRoundUp = kMomentRoundUp;

/// Lanes to a leaf: at N_leaf 16 a leaf holds ~5 particles on average.
constexpr unsigned kLeafLanes = 4;
/// Lanes to an internal cell: one for each child it can have.
constexpr unsigned kChildLanes = 8;
constexpr unsigned kWarpsPerBlock = kBlock / 32;
constexpr unsigned kFullWarp = 0xffffffffu;

struct MomentArrays {
  const std::uint32_t* first;
  const std::uint32_t* count;
  const std::uint32_t* child;
  const std::uint32_t* parent;
  std::uint32_t* arrivals;  // zeroed before the launch
  const std::uint8_t* childCount;
  const std::uint8_t* level;
  Vec4* comMass;
  Quadrupole* quad;
  Box* box;
  float* bmax;
  float* opening;
  WalkCell* walkCell;
};

struct Moments {
  float mass = 0.0f;
  Vec3 com;
  Quadrupole q;
  Box box;
  float bmax = 0.0f;
};

/// A segment of kWidth lanes of a warp that compute one cell together.
template <unsigned kWidth>
struct Segment {
  unsigned mask;  // the segment's lanes in the warp
  unsigned lane;  // 0 .. kWidth - 1 within it

  __device__ explicit Segment(unsigned warpLane)
      : mask(((1u << kWidth) - 1u) << (warpLane / kWidth * kWidth)), lane(warpLane % kWidth) {}

  /// The sum (min, max) over the segment's lanes, in every lane. The butterfly combines the same
  /// pairs in every lane, and + is commutative, so every lane holds the same bits.
  __device__ float sum(float v) const {
#pragma unroll
    for (unsigned o = 1; o < kWidth; o <<= 1) v += __shfl_xor_sync(mask, v, o);
    return v;
  }
  __device__ float min(float v) const {
#pragma unroll
    for (unsigned o = 1; o < kWidth; o <<= 1) v = fminf(v, __shfl_xor_sync(mask, v, o));
    return v;
  }
  __device__ float max(float v) const {
#pragma unroll
    for (unsigned o = 1; o < kWidth; o <<= 1) v = fmaxf(v, __shfl_xor_sync(mask, v, o));
    return v;
  }
  __device__ Vec3 sum(Vec3 v) const { return {sum(v.x), sum(v.y), sum(v.z)}; }
  __device__ Box box(const Box& b) const {
    return {{min(b.lo.x), min(b.lo.y), min(b.lo.z)}, {max(b.hi.x), max(b.hi.y), max(b.hi.z)}};
  }
  __device__ Quadrupole sum(const Quadrupole& q) const {
    return {sum(q.xx), sum(q.yy), sum(q.zz), sum(q.xy), sum(q.xz), sum(q.yz)};
  }
  /// Lane 0's value, in every lane.
  __device__ float first(float v) const { return __shfl_sync(mask, v, 0, kWidth); }
};

__device__ void addOuter(Quadrupole& q, float m, Vec3 d) {
  q.xx += m * d.x * d.x;
  q.yy += m * d.y * d.y;
  q.zz += m * d.z * d.z;
  q.xy += m * d.x * d.y;
  q.xz += m * d.x * d.z;
  q.yz += m * d.y * d.z;
}

__device__ Vec3 divide(Vec3 v, float s) { return {v.x / s, v.y / s, v.z / s}; }

/// A leaf's moments, by a segment: lane j takes particles begin + j, begin + j + kLeafLanes, ...
/// The reference point is the first particle, which lane 0 reads first.
__device__ Moments leafMoments(const Vec4* __restrict__ posMass, std::uint32_t begin,
                               std::uint32_t n, const Segment<kLeafLanes>& s) {
  Moments r;
  if (n == 0) return r;
  const Vec4 head = posMass[begin + (s.lane < n ? s.lane : 0u)];
  const Vec3 ref{s.first(head.x), s.first(head.y), s.first(head.z)};
  Vec3 sum;
  float mass = 0.0f, lost = 0.0f;  // compensated: a deepest-level leaf may hold many duplicates
  Box box;
  for (std::uint32_t i = s.lane; i < n; i += kLeafLanes) {
    const Vec4 p = i == s.lane ? head : posMass[begin + i];
    const float y = p.w - lost;
    const float t = mass + y;
    lost = (t - mass) - y;
    mass = t;
    sum = sum + p.w * (xyz(p) - ref);
    grow(box, xyz(p));
  }
  r.mass = s.sum(mass - lost);  // each lane's compensated sum
  r.box = s.box(box);
  const Vec3 offset = divide(s.sum(sum), r.mass);
  r.com = ref + offset;
  Quadrupole q;
  float d2max = 0.0f;
  for (std::uint32_t i = s.lane; i < n; i += kLeafLanes) {
    const Vec4 p = i == s.lane ? head : posMass[begin + i];
    addOuter(q, p.w, (xyz(p) - ref) - offset);
    const Vec3 e = xyz(p) - r.com;
    d2max = fmaxf(d2max, dot(e, e));
  }
  r.q = s.sum(q);
  r.bmax = sqrtf(s.max(d2max)) * kRoundUp;
  return r;
}

// A child's moments, read from L2: another SM may have written them during this launch.
__device__ Vec4 loadComMass(const Vec4* p) {
  const float4 v = __ldcg(reinterpret_cast<const float4*>(p));
  return {v.x, v.y, v.z, v.w};
}
__device__ Box loadBox(const Box* p) {
  const auto* f = reinterpret_cast<const float*>(p);
  return {{__ldcg(f), __ldcg(f + 1), __ldcg(f + 2)}, {__ldcg(f + 3), __ldcg(f + 4), __ldcg(f + 5)}};
}
__device__ Quadrupole loadQuad(const Quadrupole* p) {
  const auto* f = reinterpret_cast<const float*>(p);
  return {__ldcg(f), __ldcg(f + 1), __ldcg(f + 2), __ldcg(f + 3), __ldcg(f + 4), __ldcg(f + 5)};
}

// An internal cell's moments, by a segment, lane j from child k0 + j (every load issued at once).
// Parallel-axis theorem: each child's second moments moved from its COM to the parent's.
__device__ Moments internalMoments(const MomentArrays& a, std::uint32_t k0, unsigned children,
                                   const Segment<kChildLanes>& s) {
  const bool mine = s.lane < children;
  const std::uint32_t k = k0 + (mine ? s.lane : 0u);
  const Vec4 cm = loadComMass(a.comMass + k);
  const Box childBox = loadBox(a.box + k);
  Quadrupole q = loadQuad(a.quad + k);
  const float childBmax = __ldcg(a.bmax + k);
  const Vec3 ref{s.first(cm.x), s.first(cm.y), s.first(cm.z)};
  const float m = mine ? cm.w : 0.0f;
  const Vec3 d = mine ? xyz(cm) - ref : Vec3{};
  Moments r;
  r.mass = s.sum(m);
  r.box = s.box(mine ? childBox : Box{});
  const Vec3 offset = divide(s.sum(m * d), r.mass);
  r.com = ref + offset;
  float bound = 0.0f;
  if (mine) {
    addOuter(q, m, d - offset);
    const Vec3 e = xyz(cm) - r.com;
    bound = (sqrtf(dot(e, e)) * kRoundUp + childBmax) * kRoundUp;
  } else {
    q = Quadrupole{};
  }
  r.q = s.sum(q);
  // Two upper bounds on the farthest particle; the smaller is the better one.
  r.bmax = fminf(s.max(bound), farthestCornerDistance(r.com, r.box) * kRoundUp);
  return r;
}

/// What the kernel reads of a cell besides its moments, read at once.
struct Links {
  std::uint32_t first, count, child, parent;
  unsigned children, level;
};

__device__ Links linksOf(const MomentArrays& a, std::uint32_t c) {
  return {a.first[c], a.count[c], a.child[c], a.parent[c], a.childCount[c], a.level[c]};
}

struct Setup {
  const KeyFrame* __restrict__ frame;
  MacSetup mac;
  OrbCutsView domains;
  const Vec4* __restrict__ posMass;
  MomentArrays a;
};

/// Adds one to *p at GPU scope, releasing this thread's writes (and those it has seen) before
/// it, and acquiring the writes released before the additions it follows. Cheaper than a fence on
/// either side of a relaxed atomic (H200: the kernel 0.527 -> 0.511 ms at 2^23).
__device__ unsigned arrive(std::uint32_t* p) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory");
  return old;
}

/// Writes cell c's moments, opening value and walk record, and counts it in its parent's
/// arrivals. Returns the parent if c was the last of its children to arrive, else kNoParent.
__device__ std::uint32_t finishCell(std::uint32_t c, const Links& l, const Moments& m,
                                    float rootSide, const Setup& u) {
  const MomentArrays& a = u.a;
  // Read before the arrival, which orders every load after it.
  const unsigned siblings = l.parent == kNoParent ? 0u : a.childCount[l.parent];
  a.comMass[c] = {m.com.x, m.com.y, m.com.z, m.mass};
  a.quad[c] = m.q;
  a.box[c] = m.box;
  a.bmax[c] = m.bmax;
  const float side = rootSide / static_cast<float>(1u << l.level);
  const CellShape shape{m.mass, side, m.box, m.com, m.bmax, m.q.xx + m.q.yy + m.q.zz};
  const int meeting = u.domains.levels > 0 && u.mac.code == MacCode::Multipole
                          ? orbDomainsMeetingCell(u.domains, *u.frame, m.box, l.level)
                          : 1;
  const float opening = openingValue(u.mac.code, u.mac.theta,
                                     paramOfParts(u.mac.code, u.mac.param, 1, meeting), shape);
  a.opening[c] = opening;
  a.walkCell[c] = walkCellOf(Vec4{m.com.x, m.com.y, m.com.z, m.mass}, m.q, m.box, opening, l.first,
                             l.count, l.child, l.children);
  if (l.parent == kNoParent) return kNoParent;
  return arrive(a.arrivals + l.parent) + 1u == siblings ? l.parent : kNoParent;
}

/// A warp takes 32 consecutive cells. Its leaves' particles are summed by segments of
/// kLeafLanes (coalesced reads) into shared memory; then a thread a leaf writes it (coalesced
/// writes) and arrives at its parent. The parents so completed are computed by segments of
/// kChildLanes, four at a time, each climbing on while it completes the next parent.
__global__ void __launch_bounds__(kBlock) momentsKernel(std::uint32_t cells, Setup u) {
  const float side = u.frame->side;  // the root cube's
  // The warps' leaf sums (Moments has initialisers, which __shared__ storage may not run).
  __shared__ alignas(alignof(Moments)) unsigned char leafSums[kWarpsPerBlock][32 * sizeof(Moments)];
  const MomentArrays& a = u.a;
  const unsigned lane = threadIdx.x % 32;
  auto* sums = reinterpret_cast<Moments*>(leafSums[threadIdx.x / 32]);
  const std::uint32_t base = (blockIdx.x * blockDim.x + threadIdx.x) - lane;
  const std::uint32_t mine = base + lane;
  const Links own = mine < cells ? linksOf(a, mine) : Links{0, 0, 0, kNoParent, 1, 0};
  const bool leaf = own.children == 0;
  const unsigned leaves = __ballot_sync(kFullWarp, leaf);

  // The leaves' sums, kLeafLanes lanes to a leaf; a leaf's range comes from its own lane.
  const Segment<kLeafLanes> ls(lane);
  const unsigned count = __popc(leaves);
  for (unsigned k0 = 0; k0 < count; k0 += 32 / kLeafLanes) {
    const unsigned k = k0 + lane / kLeafLanes;
    const unsigned bit = k < count ? __fns(leaves, 0, k + 1) : lane;  // the (k + 1)-th leaf
    const std::uint32_t first = __shfl_sync(kFullWarp, own.first, bit);
    const std::uint32_t n = __shfl_sync(kFullWarp, own.count, bit);
    if (k < count) {
      const Moments m = leafMoments(u.posMass, first, n, ls);
      if (ls.lane == 0) sums[bit] = m;
    }
  }
  __syncwarp();
  std::uint32_t climb = leaf ? finishCell(mine, own, sums[lane], side, u) : kNoParent;

  const Segment<kChildLanes> cs(lane);
  for (;;) {
    __syncwarp();  // the arrivals' acquires order the children's moments for every lane
    const unsigned climbers = __ballot_sync(kFullWarp, climb != kNoParent);
    if (climbers == 0) return;
    // Segment g takes the (g + 1)-th climber; a lane taken gets back its segment's next parent.
    const unsigned g = lane / kChildLanes, taken = __popc(climbers);
    const bool busy = g < taken;
    const std::uint32_t c = __shfl_sync(kFullWarp, climb, busy ? __fns(climbers, 0, g + 1) : 0);
    std::uint32_t next = kNoParent;
    if (busy) {
      const Links l = linksOf(a, c);
      const Moments m = internalMoments(a, l.child, l.children, cs);
      if (cs.lane == 0) next = finishCell(c, l, m, side, u);
    }
    const unsigned rank = __popc(climbers & ((1u << lane) - 1u));  // this lane among the climbers
    const bool mineTaken = climb != kNoParent && rank < 32 / kChildLanes;
    const std::uint32_t back =
        __shfl_sync(kFullWarp, next, (rank % (32 / kChildLanes)) * kChildLanes);
    if (mineTaken) climb = back;
  }
}

}  // namespace

void launchMoments(DeviceTree& tree, const DeviceParticles& p, const BuildWorkspace& ws,
                   const MacSetup& mac, Stream stream, OrbCutsView domains) {
  if (p.n >= (std::size_t(1) << 28)) {
    throw std::invalid_argument("launchMoments: the walk records hold leaf counts below 2^28");
  }
  if (tree.cells == 0) return;
  tree.walkCell.reserve(tree.cells);
  const MomentArrays a{tree.first.data(),   tree.count.data(),    tree.child.data(),
                       tree.parent.data(),  tree.arrivals.data(), tree.childCount.data(),
                       tree.level.data(),   tree.comMass.data(),  tree.quad.data(),
                       tree.box.data(),     tree.bmax.data(),     tree.opening.data(),
                       tree.walkCell.data()};
  const auto cells = static_cast<std::uint32_t>(tree.cells);
  BHVIZ_CUDA_CHECK(cudaMemsetAsync(tree.arrivals.data(), 0, cells * sizeof(std::uint32_t), stream));
  momentsKernel<<<blocksFor(cells), kBlock, 0, stream>>>(
      cells, Setup{ws.frame.data(), mac, domains, p.posMass.data(), a});
  BHVIZ_CUDA_CHECK_LAUNCH();
}

}  // namespace bhviz::sim::cuda
