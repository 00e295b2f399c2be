// Cell moments bottom-up, the device twin of cpu::computeMoments, in fp32.
//
// One launch for the whole tree: a thread per leaf computes its leaf, then climbs. Each cell
// done counts itself in its parent's `arrivals` (after a fence that publishes its moments); the
// thread whose count completes the parent computes it, reading the children past L1 (another SM
// wrote them during this launch), and climbs on. A parent is always computed from its children
// in index order, so the result is the one a launch per level gave, bit for bit. That was ~15
// launches whose small upper levels each cost a few µs of device time: a block substep, which
// refits the moments of the whole tree every time, paid it ~0.15 ms at 65 k particles.
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

__device__ void addOuter(Quadrupole& q, float m, Vec3 d) {
  q.xx += m * d.x * d.x;
  q.yy += m * d.y * d.y;
  q.zz += m * d.z * d.z;
  q.xy += m * d.x * d.y;
  q.xz += m * d.x * d.z;
  q.yz += m * d.y * d.z;
}

__device__ Vec3 divide(Vec3 v, float s) { return {v.x / s, v.y / s, v.z / s}; }

__device__ Moments leafMoments(const Vec4* __restrict__ posMass, std::uint32_t begin,
                               std::uint32_t end) {
  Moments r;
  if (begin == end) return r;
  const Vec3 ref = xyz(posMass[begin]);
  Vec3 sum;
  float lost = 0.0f;  // compensated mass sum: a deepest-level leaf may hold many duplicates
  for (std::uint32_t i = begin; i < end; ++i) {
    const Vec4 p = posMass[i];
    const float y = p.w - lost;
    const float t = r.mass + y;
    lost = (t - r.mass) - y;
    r.mass = t;
    sum = sum + p.w * (xyz(p) - ref);
    grow(r.box, xyz(p));
  }
  const Vec3 offset = divide(sum, r.mass);
  r.com = ref + offset;
  float d2max = 0.0f;
  for (std::uint32_t i = begin; i < end; ++i) {
    const Vec4 p = posMass[i];
    addOuter(r.q, p.w, (xyz(p) - ref) - offset);
    const Vec3 e = xyz(p) - r.com;
    d2max = fmaxf(d2max, dot(e, e));
  }
  r.bmax = sqrtf(d2max) * kRoundUp;
  return r;
}

// A child's moments, read from L2: its thread may have run on another SM during this launch.
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

// Parallel-axis theorem: each child's second moments moved from its COM to the parent's.
__device__ Moments internalMoments(const MomentArrays& a, std::uint32_t k0, std::uint32_t k1) {
  Moments r;
  const Vec3 ref = xyz(loadComMass(a.comMass + k0));
  Vec3 sum;
  for (std::uint32_t k = k0; k < k1; ++k) {
    const Vec4 cm = loadComMass(a.comMass + k);
    r.mass += cm.w;
    sum = sum + cm.w * (xyz(cm) - ref);
    grow(r.box, loadBox(a.box + k));
  }
  const Vec3 offset = divide(sum, r.mass);
  r.com = ref + offset;
  float bound = 0.0f;
  for (std::uint32_t k = k0; k < k1; ++k) {
    const Vec4 cm = loadComMass(a.comMass + k);
    const Quadrupole qk = loadQuad(a.quad + k);
    r.q.xx += qk.xx;
    r.q.yy += qk.yy;
    r.q.zz += qk.zz;
    r.q.xy += qk.xy;
    r.q.xz += qk.xz;
    r.q.yz += qk.yz;
    addOuter(r.q, cm.w, (xyz(cm) - ref) - offset);
    const Vec3 e = xyz(cm) - r.com;
    bound = fmaxf(bound, (sqrtf(dot(e, e)) * kRoundUp + __ldcg(a.bmax + k)) * kRoundUp);
  }
  // Two upper bounds on the farthest particle; the smaller is the better one.
  r.bmax = fminf(bound, farthestCornerDistance(r.com, r.box) * kRoundUp);
  return r;
}

/// Computes and writes cell c's moments, opening value and walk record.
__device__ void writeCell(std::uint32_t c, const KeyFrame* __restrict__ frame, const MacSetup& mac,
                          const OrbCutsView& domains, const Vec4* __restrict__ posMass,
                          const MomentArrays& a) {
  const unsigned children = a.childCount[c];
  const Moments m = children == 0 ? leafMoments(posMass, a.first[c], a.first[c] + a.count[c])
                                  : internalMoments(a, a.child[c], a.child[c] + children);
  a.comMass[c] = {m.com.x, m.com.y, m.com.z, m.mass};
  a.quad[c] = m.q;
  a.box[c] = m.box;
  a.bmax[c] = m.bmax;
  const float side = frame->side / static_cast<float>(1u << a.level[c]);
  const CellShape shape{m.mass, side, m.box, m.com, m.bmax, m.q.xx + m.q.yy + m.q.zz};
  const int meeting = domains.levels > 0 && mac.code == MacCode::Multipole
                          ? orbDomainsMeetingCell(domains, *frame, m.box, a.level[c])
                          : 1;
  const float opening =
      openingValue(mac.code, mac.theta, paramOfParts(mac.code, mac.param, 1, meeting), shape);
  a.opening[c] = opening;
  a.walkCell[c] = walkCellOf(Vec4{m.com.x, m.com.y, m.com.z, m.mass}, m.q, m.box, opening,
                             a.first[c], a.count[c], a.child[c], children);
}

__global__ void momentsKernel(std::uint32_t cells, const KeyFrame* __restrict__ frame, MacSetup mac,
                              OrbCutsView domains, const Vec4* __restrict__ posMass,
                              MomentArrays a) {
  std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cells || a.childCount[c] != 0) return;  // the climbs start at the leaves
  for (;;) {
    writeCell(c, frame, mac, domains, posMass, a);
    const std::uint32_t up = a.parent[c];
    if (up == kNoParent) return;
    __threadfence();  // this cell's moments before its arrival
    if (atomicAdd(a.arrivals + up, 1u) + 1u != a.childCount[up]) return;  // a sibling goes on
    __threadfence();  // the siblings' moments after their arrivals
    c = up;
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
  momentsKernel<<<blocksFor(cells), kBlock, 0, stream>>>(cells, ws.frame.data(), mac, domains,
                                                         p.posMass.data(), a);
  BHVIZ_CUDA_CHECK_LAUNCH();
}

}  // namespace bhviz::sim::cuda
