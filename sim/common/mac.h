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
  float mass;      ///< [mass]
  float side;      ///< geometric octree cell side [length]
  Box box;         ///< tight box of the cell's particles
  Vec3 com;        ///< centre of mass
  float bmax;      ///< largest distance from the COM to a particle (or an upper bound) [length]
  float b2;        ///< Σ m |x − com|² (trace of the second moments) [mass·length²]
};

/// The cell's opening value: for the distance MACs a squared critical radius r_c², for the
/// acceleration MAC M·l²/α. `param` is θ for bh/bonsai, Δ_mul for multipole, α for acceleration.
BHVIZ_HD inline float openingValue(MacCode mac, float theta, float param, const CellShape& c) {
  const Vec3 ext = c.box.hi - c.box.lo;
  const float l = fmaxf(fmaxf(ext.x, ext.y), ext.z);
  switch (mac) {
    case MacCode::BarnesHut: {
      const float rc = c.side / theta;
      return rc * rc;
    }
    case MacCode::Bonsai: {
      const Vec3 off = c.com - 0.5f * (c.box.lo + c.box.hi);
      const float rc = l / theta + sqrtf(dot(off, off));
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
