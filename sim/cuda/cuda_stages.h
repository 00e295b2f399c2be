#pragma once
// The CUDA twins of the stages of a step: predict and integrate (kicks, drift), the tree build
// (bounding box, keys, sort, tree, moments) and the diagnostics; groups and walk are in
// groups.h and walk.h. Each takes the same inputs and fills the same layout as its CPU twin in
// sim/cpu/cpu_stages.h, so tests compare them stage by stage, and each is defined in the file of
// its stage's name, as the CPU twin is (bbox.cu ↔ bbox.cpp, …). Plain C++: compiles under g++
// and nvcc; the CUDA runtime stays inside the .cu files.
//
// A build is: launchBoundingBox → launchKeys → launchSortAndTree (the sort on the digits the
// tree reads, launchTree, the order within runs, the gather) → launchMoments, all on one stream
// (launchBuild); launchSort then launchTree make the same. Only launchTree waits for the device,
// once, to read back the level table.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/clock.h"
#include "sim/common/conserved.h"
#include "sim/common/gravity.h"
#include "sim/common/keys.h"
#include "sim/common/mac.h"
#include "sim/common/vec.h"
#include "sim/cuda/device_buffer.h"
#include "sim/diagnostics.h"
#include "sim/orb.h"
#include "sim/params.h"
#include "sim/particles.h"
#include "sim/profile.h"
#include "sim/tree.h"

namespace bhviz::sim::cuda {

/// The particle arrays on the device, in the layout of sim::Particles.
struct DeviceParticles {
  DeviceBuffer<Vec4> posMass;  ///< x, y, z [length]; w = mass [mass]
  DeviceBuffer<Vec4> vel;      ///< [length/time]
  DeviceBuffer<Vec4> accPot;   ///< [length/time²]; w = potential [energy/mass]
  DeviceBuffer<std::uint32_t> id;
  DeviceBuffer<std::uint8_t> tag;
  DeviceBuffer<std::uint8_t> bin;
  std::size_t n = 0;  ///< number of particles

  void resize(std::size_t count);  ///< sets n; grows the buffers, contents are undefined
  void poison();
  void swap(DeviceParticles& o) noexcept;
};

/// Scratch of the build stages, kept between steps so that nothing is allocated per step.
struct BuildWorkspace {
  DeviceBuffer<Box> box;                 ///< 1 element: the bounding box
  DeviceBuffer<KeyFrame> frame;          ///< 1 element: keyFrameFor(box)
  DeviceBuffer<std::uint64_t> keys[2];   ///< radix sort ping-pong
  DeviceBuffer<std::uint32_t> order[2];  ///< sort permutation ping-pong
  int current = 0;                       ///< which of keys/order holds the latest result
  DeviceParticles scratch;               ///< the gather's target, swapped in afterwards
  /// Tree build: per level and block, the cells starting in the block's particles, then the
  /// block's first slot in the level; a last row of flags.
  DeviceBuffer<std::uint32_t> levelOffsets;
  DeviceBuffer<std::uint32_t> levelTable;  ///< levelBegin[0..kMaxLevel+1] + overflow, deeper flags
  PinnedBytes levelTableHost;              ///< launchTree reads levelTable back through it
  /// Tree build: per particle, the levels of the cells it is the first particle of (lo | (hi + 1)
  /// << 8; tree_build.cu).
  DeviceBuffer<std::uint16_t> cellSpans;
  DeviceBuffer<unsigned char> temp;  ///< CUB temporary storage
  /// The digits the last build's last attempt read (ws.sortedLevels then; kMaxLevel after a
  /// tree that split a cell of its last sorted level was built again); read by tests.
  int treeLevels = 0;
  /// The digits (levels) the keys are sorted on: kMaxLevel after a full sort, fewer between a
  /// build's sort and the order of its runs (launchOrderRuns, launchSortAndTree).
  int sortedLevels = kMaxLevel;

  void reserve(std::size_t n);  ///< sizes everything but the CUB storage for n particles
  const std::uint64_t* keysData() const { return keys[current].data(); }
  const std::uint32_t* orderData() const { return order[current].data(); }
};

/// The walk's packed record of one cell, 64 bytes, written by launchMoments beside the tree's
/// arrays (a copy of what the walk reads, laid out for 16-byte loads): testing a popped cell
/// reads the first 32 bytes, an accepted cell's quadrupole the other 32.
struct alignas(16) WalkCell {
  Vec4 comMass;        ///< centre of mass [length]; w = mass [mass]
  float opening;       ///< the MAC's opening value (mac.h: openingValue)
  float reach2;        ///< an upper bound on the squared distance from the COM to any point of
                       ///< the tight box [length²]: a group box farther away cannot overlap it
  std::uint32_t link;  ///< first particle (leaf) or first child (internal cell)
  std::uint32_t span;  ///< count << 4 | childCount (a leaf: childCount 0)
  Vec4 quadHead;       ///< traceless quadrupole P = 3Q − tr(Q)·I (gravity.h: QuadSource):
                       ///< xx, yy, zz, xy [mass·length²]
  Vec4 quadTail;       ///< P's xz, yz; tr Q; 0 [mass·length²]
};
static_assert(sizeof(WalkCell) == 64, "one record per 64 bytes");

/// Distances rounded up by 2^-20 relative cover the few roundings of a subtraction, a dot product
/// and a square root (moments.cu: bmax); a reach² rounded up by 2^-17 more than the walk's own
/// rounding of its box-to-COM distance (walk.cu).
inline constexpr float kMomentRoundUp = 1.0f + 0x1.0p-20f;
inline constexpr float kReachRoundUp = 1.0f + 0x1.0p-17f;

/// The walk's record of a cell from its moments and links: the moments kernel's, and an
/// imported LET's on the host.
BHVIZ_HD inline WalkCell walkCellOf(const Vec4& comMass, const Quadrupole& q, const Box& box,
                                    float opening, std::uint32_t first, std::uint32_t count,
                                    std::uint32_t child, unsigned childCount) {
  const Vec3 com{comMass.x, comMass.y, comMass.z};
  const float reach = farthestCornerDistance(com, box) * kMomentRoundUp;
  const bool leaf = childCount == 0;
  WalkCell w;
  w.comMass = comMass;
  w.opening = opening;
  w.reach2 = reach * reach * kReachRoundUp;
  w.link = leaf ? first : child;
  w.span = (leaf ? count << 4 : 0u) | childCount;
  const QuadSource p = quadSource(q, 0.0f);  // the traceless form (gravity.h)
  w.quadHead = {p.xx, p.yy, p.zz, p.xy};
  w.quadTail = {p.xz, p.yz, q.xx + q.yy + q.zz, 0.0f};
  return w;
}

/// DeviceTree::parent of the root.
inline constexpr std::uint32_t kNoParent = 0xffffffffu;

/// The octree on the device, in the layout of sim::Tree.
struct DeviceTree {
  std::vector<std::uint32_t> levelBegin;  ///< host copy, as Tree::levelBegin (depth + 1 entries)
  std::size_t cells = 0;                  ///< number of cells
  std::size_t capacity = 0;               ///< cells the buffers hold
  std::size_t firstGuess = 0;  ///< cells to reserve before the first build; 0: from n and nLeaf

  DeviceBuffer<std::uint32_t> first, count, child;
  DeviceBuffer<std::uint32_t> parent;    ///< kNoParent for the root (launchTree fills it)
  DeviceBuffer<std::uint32_t> arrivals;  ///< launchMoments' count of children done, per cell
  DeviceBuffer<std::uint8_t> childCount, level;
  DeviceBuffer<Vec4> comMass;
  DeviceBuffer<Quadrupole> quad;
  DeviceBuffer<Box> box;
  DeviceBuffer<float> bmax, opening;
  DeviceBuffer<WalkCell> walkCell;  ///< the walk's records (launchMoments fills them)

  void reserve(std::size_t cellCount);
  void poison();
  int depth() const { return static_cast<int>(levelBegin.size()) - 1; }
};

// ---- predict and integrate (integrate.cu) -------------------------------------------------------

/// The twin of cpu::openKicks: the particles at a step boundary choose their new bin and get
/// their opening half-kick. Resets *d_deepest (device memory), then makes it the deepest bin of
/// any particle; null where the clock has one bin (the deepest is 0).
void launchOpenKicks(DeviceParticles& p, const Clock& clock, const SimParams& params,
                     int* d_deepest, Stream stream);

/// The twin of cpu::drift: every particle drifts by dt [time]. Where `d_bad` (device memory) is
/// given, sets it to 1 if a drifted position or velocity is not finite (else leaves it).
void launchDrift(DeviceParticles& p, float dt, Stream stream, std::uint32_t* d_bad = nullptr);

/// What the close kicks forecast of the next open kicks, at the same tick: with `deepest`
/// (device memory) set, they make *deepest the deepest bin any particle will have after them,
/// with these parameters (launchOpenKicks' from the SimParams; dtMax the clock's).
struct NextOpenKicks {
  float eps = 0.0f, eta = 0.0f, dtMax = 0.0f;
  int* deepest = nullptr;
};

/// The twin of cpu::closeKicks: the closing half-kicks of the particles whose step ends at the
/// clock's tick. Where `d_bad` is given, sets it to 1 if such a particle's force (its potential
/// included, the one it kept where the walk computed none) or kicked velocity is not finite.
/// With next.deepest, also the forecast above.
void launchCloseKicks(DeviceParticles& p, const Clock& clock, Stream stream,
                      std::uint32_t* d_bad = nullptr, const NextOpenKicks& next = {});

// ---- bbox (bbox.cu), keys (keys.cu), sort (sort.cu) ---------------------------------------------

/// Bounding box of the positions (cub::DeviceReduce) and its key frame, into ws.box, ws.frame.
void launchBoundingBox(const DeviceParticles& p, BuildWorkspace& ws, Stream stream);

/// Keys of the positions in ws.frame into ws.keys[0], and the identity permutation into
/// ws.order[0]; sets ws.current = 0.
void launchKeys(const DeviceParticles& p, Curve curve, BuildWorkspace& ws, Stream stream);

/// Stable radix sort of the keys with their indices (cub::DeviceRadixSort) on at least the top
/// `levels` digits of the keys (three bits each, rounded up to whole radix passes; every bit
/// where that saves no pass, and for kMaxLevel); sets ws.sortedLevels to the digits sorted.
void launchSortKeys(BuildWorkspace& ws, std::size_t n, int levels, Stream stream);

/// Where ws's keys are sorted on fewer digits than they have (ws.sortedLevels), puts each run of
/// equal sorted digits in full key order (equal keys in their input order), in place: afterwards
/// ws.keysData() and ws.orderData() are what a sort on every bit gives. A thread sorts a run
/// alone, so the runs must be short: call it after launchTree has built a tree from the keys,
/// which puts every run within a leaf. Nothing to do after a full sort.
void launchOrderRuns(BuildWorkspace& ws, std::size_t n, Stream stream);

/// Gathers every particle array into the order of ws.orderData().
void launchGather(DeviceParticles& p, BuildWorkspace& ws, Stream stream);

/// launchSortKeys on every bit, then launchGather. Afterwards ws.keysData() are the sorted keys
/// and ws.orderData() the permutation (new position k holds old particle order[k]).
void launchSort(DeviceParticles& p, BuildWorkspace& ws, Stream stream);

// ---- tree (tree_build.cu), moments (moments.cu) -------------------------------------------------

/// Octree topology from ws's sorted keys, identical to cpu::buildTree: every level at once, in
/// four launches (tree_build.cu). Waits for the stream once at the end to read the level table
/// (and builds again with larger buffers in the rare case they overflowed). It reads the digits
/// the keys are sorted on (ws.sortedLevels); where a cell of the last of them would split, the
/// keys are sorted on every bit and the tree built again.
void launchTree(BuildWorkspace& ws, std::size_t n, int nLeaf, DeviceTree& tree, Stream stream);

/// The largest N_leaf whose builds sort on the tree's digits only: launchOrderRuns sorts a run,
/// at most a leaf, by one thread in up to N_leaf² / 2 steps.
inline constexpr int kMaxRunSortLeaf = 64;

/// The levels below the last tree's deepest level that a build's sort covers: a tree that deep
/// needs no second attempt (the radix passes' rounding often leaves a level or two more).
inline constexpr int kSortLevelsAhead = 1;

/// The levels a build's sort covers at least (launchSortAndTree): the last tree's deepest level
/// and kSortLevelsAhead more; every level for a first build, and where N_leaf exceeds
/// kMaxRunSortLeaf.
int sortLevelsForTree(const DeviceTree& tree, int nLeaf);

/// The digits a sort on at least `levels` digits leaves sorted (launchSortKeys, ws.sortedLevels):
/// their bits rounded up to whole radix passes, every level where that saves no pass.
int sortedLevelsFor(int levels);

/// A build's sort and tree: the keys sorted on the digits the tree's levels read
/// (sortLevelsForTree: fewer radix passes where the tree is shallow), the tree built (sorted again
/// on every bit if it is deeper than that), the runs of equal sorted digits put in order, the
/// particles gathered. The same particle order, keys and tree as launchSort then launchTree, bit
/// for bit. `timed(stage, launch)` runs each part: Stage::Sort before and after the tree,
/// Stage::Tree around it (the backend's stage events; the overload without it just runs them).
template <typename Timed>
void launchSortAndTree(DeviceParticles& p, BuildWorkspace& ws, int nLeaf, DeviceTree& tree,
                       Stream stream, Timed&& timed) {
  timed(Stage::Sort, [&] { launchSortKeys(ws, p.n, sortLevelsForTree(tree, nLeaf), stream); });
  timed(Stage::Tree, [&] { launchTree(ws, p.n, nLeaf, tree, stream); });
  timed(Stage::Sort, [&] {
    launchOrderRuns(ws, p.n, stream);
    launchGather(p, ws, stream);
  });
}
void launchSortAndTree(DeviceParticles& p, BuildWorkspace& ws, int nLeaf, DeviceTree& tree,
                       Stream stream);

/// Moments bottom-up in fp32 (one launch: segments of a warp sum the leaves, the one that completes
/// a parent's children computes it), opening values and the walk's records. Needs the parents
/// launchTree filled. Positions must be in key order (after launchSort); n < 2^28. `domains`
/// (device cuts, sided in ws's frame; none: levels 0): a distributed run's, whose faces cut
/// some cubes into parts (paramOfParts), as cpu::computeMoments.
void launchMoments(DeviceTree& tree, const DeviceParticles& p, const BuildWorkspace& ws,
                   const MacSetup& mac, Stream stream, OrbCutsView domains = {});

/// Runs the five stages in order (tree_build.cu), the twin of cpu::buildSortedTree.
void launchBuild(DeviceParticles& p, Curve curve, int nLeaf, const MacSetup& mac,
                 BuildWorkspace& ws, DeviceTree& tree, Stream stream);

// ---- diagnostics (diagnostics.cu) ---------------------------------------------------------------

/// The twin of sim::computeDiagnostics: the conserved sums and the bin census reduced on the
/// device (the sums' double atomics add in no fixed order), then read back (blocking). The two
/// buffers are scratch kept by the caller, so that the call allocates nothing once sized.
Diagnostics computeDiagnostics(const DeviceParticles& p, const Clock& clock,
                               DeviceBuffer<ConservedSums>& d_sums,
                               DeviceBuffer<unsigned long long>& d_histogram, Stream stream);

/// Up to `max` ids, sorted, of the particles whose position is not finite; where every position
/// is, of those whose velocity is not, else whose force is not; none when all are finite
/// (blocking). `counts` and `ids` are scratch kept by the caller (checked after every substep).
std::vector<std::uint32_t> findNonFinite(const DeviceParticles& p, std::size_t max,
                                         DeviceBuffer<std::uint32_t>& counts,
                                         DeviceBuffer<std::uint32_t>& ids, Stream stream);

// ---- host copies and timing (device_memory.cu) --------------------------------------------------

// Host copies (blocking), for tests and the CPU fallback.
void uploadParticles(const Particles& h, DeviceParticles& d);
void downloadParticles(const DeviceParticles& d, Particles& h);
void copyParticles(const DeviceParticles& src, DeviceParticles& dst, Stream stream);
Box downloadBox(const BuildWorkspace& ws);
KeyFrame downloadFrame(const BuildWorkspace& ws);
std::vector<std::uint64_t> downloadKeys(const BuildWorkspace& ws, std::size_t n);
std::vector<std::uint32_t> downloadOrder(const BuildWorkspace& ws, std::size_t n);
/// The whole tree: topology, and the moments when withMoments.
void downloadTree(const DeviceTree& d, const BuildWorkspace& ws, Tree& h, bool withMoments = true);

/// Wall time of device work between two points of a stream (CUDA events).
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(Stream stream);
  void stop(Stream stream);
  float elapsedMs();  ///< waits for the stop event

 private:
  void* m_start = nullptr;
  void* m_stop = nullptr;
};

}  // namespace bhviz::sim::cuda
