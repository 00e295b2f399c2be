#pragma once
// What the domain decomposition (sim/dist/orb.h: weighted orthogonal recursive bisection) asks
// of one rank's particles, where they live: the weight below a cut in each splitting domain, a
// level's cuts applied, and each particle's domain at the end. The CPU twin is below
// (sim/cpu/orb.cpp); the CUDA backend's counts on the device (sim/cuda/orb.cu). A backend hands
// one out through ForceParts::orbParticles.

#include <cstdint>
#include <vector>

#include "sim/common/keys.h"
#include "sim/common/vec.h"

namespace bhviz::sim {

/// A domain is named by the first rank it holds: the domain [r, r + k) of ranks. What one level
/// does to the domain named r (indexed by r; axis < 0: not split at this level).
struct OrbCut {
  int axis = -1;       ///< 0, 1, 2: x, y, z
  float position = 0;  ///< particles with coordinate < position stay low [length]
  int high = 0;        ///< the name of the high half: r + ⌊k/2⌋
  /// A cut on an octree plane of the trees' key frame (OrbSettings::grid) sides by the key
  /// quantisation instead (keyScale > 0): high where quantizeAxis(coordinate, keyOrigin,
  /// keyScale) ≥ keyPlane. A particle a rounding below the plane whose key lies above it is
  /// then on the rank whose tree has it on that side: otherwise its own tree holds it in a cell
  /// beyond the plane, alone with the few like it, and their one group spans the face (one
  /// warp walked such a group 30 ms longer than the rest on a 16 M Plummer sphere).
  float keyOrigin = 0.0f;      ///< the frame's origin along `axis` [length]
  float keyScale = 0.0f;       ///< 2^21 / the frame's side, as quantize() computes it [1/length]
  std::uint32_t keyPlane = 0;  ///< the plane's quantised coordinate [1]
};

/// Makes `c` a cut on plane `plane` (a quantised coordinate) of frame `f`, sided by the keys.
inline void sideByKeys(OrbCut& c, const KeyFrame& f, std::uint32_t plane) {
  c.keyOrigin = c.axis == 0 ? f.origin.x : c.axis == 1 ? f.origin.y : f.origin.z;
  c.keyScale = keyScale(f);
  c.keyPlane = plane;
}

/// Whether `x` lies on the high side of `c` (c.axis ≥ 0).
BHVIZ_HD inline bool orbHigh(const OrbCut& c, Vec3 x) {
  const float v = c.axis == 0 ? x.x : c.axis == 1 ? x.y : x.z;
  if (c.keyScale > 0.0f) return quantizeAxis(v, c.keyOrigin, c.keyScale) >= c.keyPlane;
  return !(v < c.position);
}

/// A decomposition's cuts, level by level as decompose made them. They place any point in one
/// domain, inside the box they were cut from or not (a level's cut of a domain sends everything
/// at or above it high), so the particles that moved since can be sent where they now lie
/// without a new decomposition (ForceParts::strays).
struct OrbCuts {
  int ranks = 1;
  std::vector<OrbCut> cut;  ///< levels × ranks, by level: entry l·ranks + r is level l's of r
  int levels() const { return ranks > 0 ? static_cast<int>(cut.size()) / ranks : 0; }
};

/// The domain of `x` under `levels` levels of cuts of `ranks` domains (OrbCuts::cut).
BHVIZ_HD inline int orbDomainOf(const OrbCut* cut, int levels, int ranks, Vec3 x) {
  int d = 0;
  for (int l = 0; l < levels; ++l) {
    const OrbCut c = cut[l * ranks + d];
    if (c.axis >= 0 && orbHigh(c, x)) d = c.high;
  }
  return d;
}

/// The cuts as a kernel or a moments pass reads them: `cut` is OrbCuts::cut (host or device
/// memory, as the reader needs), levels × ranks entries.
struct OrbCutsView {
  const OrbCut* cut = nullptr;
  int levels = 0;
  int ranks = 1;
};

/// How many domains the octree cube at `level` of frame `f` that holds the quantised point `q`
/// meets: 1 where a domain holds it whole, more where domain faces cross it (each such domain
/// holds a part of it, its own cell in its rank's tree). Compared in key units: a cut sided by
/// the keys of `f` exactly; any other by its position's key, counting the cube on both sides
/// where the plane passes through that key's interval (quantising is monotone: a particle below
/// the position has a key at most the position's, one above at least it), so a cube that holds
/// particles of two domains is never counted as one, on the host or the device.
BHVIZ_HD inline int orbDomainsMeetingCube(const OrbCutsView& cuts, const KeyFrame& f, KeyCoords q,
                                          int level) {
  const int shift = kKeyBitsPerAxis - level;
  const float scale = keyScale(f);
  // Depth first over the cut tree: (level, domain) pairs still to visit; a cube visits at most
  // one pair per ORB level on the stack at once, plus the one it branches to.
  constexpr int kMaxLevels = 32;
  int stackLevel[kMaxLevels + 1], stackDomain[kMaxLevels + 1];
  int top = 0, meets = 0;
  stackLevel[0] = 0, stackDomain[0] = 0;
  ++top;
  while (top > 0) {
    --top;
    int l = stackLevel[top], d = stackDomain[top];
    for (; l < cuts.levels; ++l) {
      const OrbCut c = cuts.cut[l * cuts.ranks + d];
      if (c.axis < 0) continue;
      const std::uint32_t k = (c.axis == 0 ? q.x : c.axis == 1 ? q.y : q.z) >> shift;
      const std::uint64_t lo = std::uint64_t{k} << shift, hi = std::uint64_t{k + 1} << shift;
      const float origin = c.axis == 0 ? f.origin.x : c.axis == 1 ? f.origin.y : f.origin.z;
      bool low = false, high = false;
      if (c.keyScale > 0.0f && c.keyScale == scale && c.keyOrigin == origin) {
        low = lo < c.keyPlane;  // high: key ≥ keyPlane
        high = hi > c.keyPlane;
      } else {
        const std::uint32_t at = quantizeAxis(c.position, origin, scale);
        low = lo <= at;
        high = hi > at;
      }
      if (low && high && top < kMaxLevels) {
        stackLevel[top] = l + 1, stackDomain[top] = c.high;
        ++top;
      } else if (high && !low) {
        d = c.high;
      }
    }
    ++meets;
  }
  return meets;
}

/// The domains meeting the cube of a cell at `level` whose tight box is `box` (the box's centre
/// lies in the cell's cube: quantising is monotone, and each axis of the box spans particles).
BHVIZ_HD inline int orbDomainsMeetingCell(const OrbCutsView& cuts, const KeyFrame& f,
                                          const Box& box, int level) {
  return orbDomainsMeetingCube(cuts, f, quantize(0.5f * (box.lo + box.hi), f), level);
}

/// The host's view of `cuts`.
inline OrbCutsView viewOf(const OrbCuts& cuts) {
  return {cuts.cut.data(), cuts.levels(), cuts.ranks};
}

/// Candidate cuts of one splitting domain (indexed by the domain's name; axis < 0: none): the
/// planes a + j·h, j = 0..m, along `axis`. Its histogram has m + 2 entries from `offset`: the
/// weight below a, then of each [a + j·h, a + (j+1)·h), then at or above a + m·h.
struct OrbGrid {
  int axis = -1;
  float a = 0.0f;  ///< [length]
  float h = 0.0f;  ///< [length], > 0
  int m = 0;       ///< intervals [1]
  int offset = 0;  ///< first entry in the histogram [1]
};

/// The interval of a coordinate in a grid: -1 below a, m at or above a + m·h.
BHVIZ_HD inline int orbBin(float x, const OrbGrid& g) {
  const float t = (x - g.a) / g.h;
  if (!(t >= 0.0f)) return -1;
  return t >= static_cast<float>(g.m) ? g.m : static_cast<int>(t);
}

/// One rank's particles as the ORB sees them; each particle carries the name of its domain
/// (0 before the first level: the domain of every rank).
class OrbParticles {
 public:
  virtual ~OrbParticles() = default;
  /// below[r] = Σ weight of this rank's particles of domain r whose coordinate along
  /// cuts[r].axis is < cuts[r].position, for each split domain r (others left as they are).
  virtual void weighBelow(const std::vector<OrbCut>& cuts,
                          std::vector<std::uint64_t>& below) const = 0;
  /// hist[grids[r].offset + orbBin(x, grids[r]) + 1] += weight, for each particle of a domain r
  /// with a grid (x its coordinate along grids[r].axis); other entries left as they are.
  virtual void histogram(const std::vector<OrbGrid>& grids,
                         std::vector<std::uint64_t>& hist) const = 0;
  /// Applies a level: a particle of split domain r at or above the cut moves to cuts[r].high.
  virtual void split(const std::vector<OrbCut>& cuts) = 0;
  /// Each particle's domain (its rank, after the last level), in the particles' order.
  virtual std::vector<int> domains() const = 0;
  /// The particles whose domain is not `rank`, ascending, and their domains: what leaves.
  virtual void leavers(int rank, std::vector<std::uint32_t>& index,
                       std::vector<int>& domain) const = 0;
};

/// The weight of a particle in a decomposition: its interactions in one evaluation (at least
/// 1) times the 2^bin evaluations of its bin per full step, capped at 2^40 so that sums over
/// billions of particles stay within 64 bits.
BHVIZ_HD inline std::uint64_t orbWeight(std::uint32_t work, std::uint8_t bin) {
  const std::uint64_t w = static_cast<std::uint64_t>(work > 0 ? work : 1u) << (bin < 20 ? bin : 20);
  return w < (std::uint64_t{1} << 40) ? w : (std::uint64_t{1} << 40);
}

/// The CPU twin: positions read in place, weights and domain names its own.
class HostOrbParticles final : public OrbParticles {
 public:
  /// `posMass` is read, not copied: it must outlive this object. `weight`: one per particle, or
  /// none for unit weights (as the device twin's null work).
  HostOrbParticles(const std::vector<Vec4>& posMass, std::vector<std::uint64_t> weight);
  void weighBelow(const std::vector<OrbCut>& cuts,
                  std::vector<std::uint64_t>& below) const override;
  void histogram(const std::vector<OrbGrid>& grids,
                 std::vector<std::uint64_t>& hist) const override;
  void split(const std::vector<OrbCut>& cuts) override;
  std::vector<int> domains() const override { return m_domain; }
  void leavers(int rank, std::vector<std::uint32_t>& index,
               std::vector<int>& domain) const override;
  const std::vector<int>& domain() const { return m_domain; }

 private:
  const std::vector<Vec4>& m_posMass;
  std::vector<std::uint64_t> m_weight;
  std::vector<int> m_domain;
};

}  // namespace bhviz::sim
