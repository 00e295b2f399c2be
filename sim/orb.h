#pragma once
// What the domain decomposition (sim/dist/orb.h: weighted orthogonal recursive bisection) asks
// of one rank's particles, where they live: the weight below a cut in each splitting domain, a
// level's cuts applied, and each particle's domain at the end. The CPU twin is below
// (sim/cpu/orb.cpp); the CUDA backend's counts on the device (sim/cuda/orb.cu). A backend hands
// one out through ForceParts::orbParticles.

#include <cstdint>
#include <vector>

#include "sim/common/vec.h"

namespace bhviz::sim {

/// A domain is named by the first rank it holds: the domain [r, r + k) of ranks. What one level
/// does to the domain named r (indexed by r; axis < 0: not split at this level).
struct OrbCut {
  int axis = -1;       ///< 0, 1, 2: x, y, z
  float position = 0;  ///< particles with coordinate < position stay low [length]
  int high = 0;        ///< the name of the high half: r + ⌊k/2⌋
};

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
  /// `posMass` is read, not copied: it must outlive this object.
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
