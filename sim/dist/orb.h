#pragma once
// Weighted Orthogonal Recursive Bisection (Rehmann's thesis, PKDGRAV): K domains, one per rank,
// that tile the particles' bounding box. Each level splits every domain that still holds more
// than one rank on the longest axis of its box, into ⌊k/2⌋ : ⌈k/2⌉ ranks, at the cut whose weight
// below matches that share of the domain's weight. The cut is found by bracketing, as the
// thesis's bisection but 4096 candidates at a time: each round is one pass over the particles
// that weighs every splitting domain's particles into the intervals between its candidate cuts
// (a histogram) and one reduction of those weights; the interval where the weight below
// crosses the target is the next round's range. Two rounds resolve 2^-24 of the extent (the
// 21 octree levels of the frame, with one). The weights are each particle's measured work, so
// work is balanced, not counts.
//
// No MPI here: the sums over ranks come from a callback (MPI_Allreduce in a run, nothing on one
// process), and the counting over one rank's particles from sim::OrbParticles (sim/orb.h: the
// host's twin, the GPU's in sim/cuda/). Weights are integers and sums exact, so every rank takes
// the same decisions from the same numbers.

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/common/keys.h"
#include "sim/common/vec.h"
#include "sim/orb.h"

namespace bhviz::sim::dist {

using sim::HostOrbParticles;
using sim::OrbCut;
using sim::OrbParticles;

/// Sums each entry over every rank, in place (MPI_Allreduce; nothing on one process).
using SumOverRanks = std::function<void(std::vector<std::uint64_t>&)>;

struct OrbSettings {
  /// Without a grid: a cut is good once the weight below it is within this fraction of its
  /// domain's weight of the target (else the nearest of the second round's candidates) [1].
  double tolerance = 1e-4;
  /// When set (side > 0): the candidate cuts are the planes of this frame's octree, and the cut
  /// is the plane of the coarsest level whose weight below is within `snapTolerance` of the
  /// target, so the local trees (built in the same frame) have no cell finer than that cut
  /// through by a domain face.
  KeyFrame grid{{0, 0, 0}, 0.0f};
  double snapTolerance = 0.01;  ///< [1] of the domain's weight
  /// Instead of `grid`: the first level cuts without planes, then the grid is the frame around
  /// that cut (frameAroundCut with this margin), and the later levels snap to its planes; the
  /// first cut is the frame's middle plane (OrbResult::frame).
  bool gridOnFirstCut = false;
  float gridMargin = 0.05f;  ///< [1] of the frame's side
};

struct OrbResult {
  std::vector<Box> domains;           ///< per rank: its domain (they tile `root`)
  std::vector<std::uint64_t> weight;  ///< per rank: the weight of its domain
  int levels = 0;                     ///< ORB levels [1]
  int iterations = 0;                 ///< search rounds (reductions) over every level [1]
  OrbCuts cuts;                       ///< the cuts, which place any point in one domain
  KeyFrame frame{{0, 0, 0}, 0.0f};    ///< the grid the cuts snapped to (side 0: none)
  /// max / mean of weight: the imbalance the cuts leave (1 for a perfect split) [1]
  double imbalance() const;
};

/// A key frame holding `bounds` grown by `margin` (of its side) whose middle plane along the
/// cut's axis is `cut`: no cell of the frame's octree below the root straddles the cut (with
/// two ranks, none straddles a domain face at all). Its side is up to twice the bounds' largest
/// extent (a cut near an end); without a cut (axis < 0), keyFrameFor(bounds) grown.
KeyFrame frameAroundCut(const Box& bounds, const OrbCut& cut, float margin);

/// `cuts` for trees in another frame `f` (the particles left the one they were cut in): the
/// first cut sided by f's keys where it is f's middle plane (frameAroundCut made f around it),
/// every other cut by its position (it is no plane of f).
OrbCuts cutsInFrame(const OrbCuts& cuts, const KeyFrame& f, bool firstCutOnMiddlePlane);

/// Decomposes `root` (the bounding box of every rank's particles) into `ranks` domains.
OrbResult decompose(int ranks, const Box& root, OrbParticles& particles, const SumOverRanks& sum,
                    const OrbSettings& settings = {});

/// When a new decomposition pays: the time the work's imbalance and growth have cost since the
/// last one, against what that one cost (a rental that buys once it has paid the price: never
/// more than twice the best schedule's loss). Fed the same reduced numbers on every rank, it
/// decides the same everywhere.
struct RebalanceLedger {
  double lostMs = 0.0;  ///< estimated time lost since the last decomposition [ms]

  /// Books `elapsedMs` of stepping at `imbalance` (max / mean work) and `growth` (the work
  /// over the work after the last decomposition), which a decomposition would bring to 1: the
  /// ranks could have done the same in elapsedMs / (imbalance · growth). Returns whether to
  /// decompose: either passed `threshold` and the time lost reached `cutMs`, the last
  /// decomposition's cost.
  bool due(double elapsedMs, double imbalance, double growth, double threshold, double cutMs);
  void clear() { lostMs = 0.0; }
};

}  // namespace bhviz::sim::dist
