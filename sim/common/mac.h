#pragma once
// Multipole acceptance criteria, written once for both backends. Each MAC reduces to one
// number per cell (its "opening value", computed with the moments) and a test that compares
// it with the distance from the group's box to the cell's centre of mass.

#include <cmath>

#include "sim/common/hd.h"
#include "sim/common/vec.h"

namespace bhviz::sim {

/// The MAC as the per-element code sees it (the enum values match MacKind).
enum class MacCode : int { BarnesHut = 0, Bonsai = 1, Multipole = 2, Acceleration = 3 };

/// What the moments stage and the walk need to know of the MAC.
struct MacSetup {
  MacCode code = MacCode::Bonsai;
  float theta = 0.5f;  ///< opening angle (bh, bonsai, and the acceleration MAC's first step) [1]
  float param = 0.0f;  ///< Δ_mul [acceleration] (multipole) or α [1] (acceleration)
};

/// What the moments stage knows about a cell, for its opening value.
struct CellShape {
  float mass;  ///< [mass]
  float side;  ///< geometric octree cell side [length] (of the tree's last rebuild)
  Box box;     ///< tight box of the cell's particles
  Vec3 com;    ///< centre of mass
  float bmax;  ///< largest distance from the COM to a particle (or an upper bound) [length]
  float b2;    ///< Σ m |x − com|² (trace of the second moments) [mass·length²]
};

/// l of the Bonsai and acceleration MACs: the longest side of the cell's tight box [length].
BHVIZ_HD inline float tightSide(const Box& box) {
  const Vec3 ext = box.hi - box.lo;
  return fmaxf(fmaxf(ext.x, ext.y), ext.z);
}

/// s of the Bonsai MAC: the distance from the centre of mass to the tight box's centre [length].
BHVIZ_HD inline float comOffset(const Box& box, Vec3 com) {
  const Vec3 off = com - 0.5f * (box.lo + box.hi);
  return sqrtf(dot(off, off));
}

/// The cell's opening value: for the distance MACs a squared critical radius r_c², for the
/// acceleration MAC M·l²/α. `param` is θ for bh/bonsai, Δ_mul for multipole, α for acceleration.
BHVIZ_HD inline float openingValue(MacCode mac, float theta, float param, const CellShape& c) {
  const float l = tightSide(c.box);
  switch (mac) {
    case MacCode::BarnesHut: {
      // A refitted tree's particles may have drifted out of their geometric cell: its tight
      // box, never larger than the cell in a fresh tree, keeps the test as strict as built.
      const float rc = fmaxf(c.side, l) / theta;
      return rc * rc;
    }
    case MacCode::Bonsai: {
      const float rc = l / theta + comOffset(c.box, c.com);
      return rc * rc;
    }
    case MacCode::Multipole: {
      const float h = 0.5f * c.bmax;
      const float rc = h + sqrtf(h * h + sqrtf(3.0f * c.b2 / param));
      return rc * rc;
    }
    case MacCode::Acceleration:
      return c.mass * l * l / param;
  }
  return INFINITY;
}

/// `param` for a cell that holds `parts` of the `domains` parts that domain faces cut its cube
/// into in a distributed run (each domain's part is a cell of its rank's tree; a merged cell
/// holds several). The multipole MAC gives every accepted cell the same absolute error budget
/// Δ_mul, whatever its mass: K parts of one cube, each accepted with Δ_mul, may err K times as
/// much as the whole cube, which one process's tree would take as one cell. Each part gets its
/// share, so the parts together keep the cube's budget (docs/ARCHITECTURE.md). The other MACs
/// scale with the cell's own mass or size; their parameters stay.
BHVIZ_HD inline float paramOfParts(MacCode mac, float param, int parts, int domains) {
  if (mac != MacCode::Multipole || domains <= 1 || parts >= domains) return param;
  return param * static_cast<float>(parts) / static_cast<float>(domains);
}

/// True when the cell must be opened for a group. d2: squared distance from the group's box to
/// the cell's COM; accMin: the smallest |a_old| in the group (acceleration MAC only).
/// A cell whose tight box overlaps the group's box is always opened: no group may take a
/// multipole of a cell that contains some of its own particles.
BHVIZ_HD inline bool mustOpen(MacCode mac, float opening, float d2, float accMin, bool overlap) {
  if (overlap) return true;
  if (mac == MacCode::Acceleration) return d2 * d2 * accMin < opening;
  return d2 < opening;
}

}  // namespace bhviz::sim
