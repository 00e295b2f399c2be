#pragma once
// What a merger scenario will do, before it is built: the Kepler orbit of the two galaxies'
// centres and each disk's plane and sense of rotation at the start, by the conventions
// makeGalaxyPair places them with (sim/ic/merger.cpp). Pure math, for the merger builder's
// preview (the app draws it as lines) and its tests.

#include <array>
#include <vector>

#include "sim/ic/scenario_file.h"

namespace bhviz::sim {

struct PreviewPoint {
  double x = 0.0, y = 0.0, z = 0.0;  ///< [length] or, for velocities, [length/time]
};

/// One galaxy's disk at the start.
struct DiskPreview {
  PreviewPoint centre;  ///< the galaxy's centre [length]
  /// Unit vector along the disk's angular momentum: its axis, turned by the spin sense.
  PreviewPoint axis;
  double radius = 0.0;             ///< of the ring: a few disk scale lengths [length]
  std::vector<PreviewPoint> ring;  ///< a circle in the disk's plane; the first point repeated last
};

struct MergerPreview {
  /// The galaxies' nominal masses (disk + bulge + halo, as their particles add up) [mass].
  std::array<double, 2> mass{};
  PreviewPoint relativePosition;  ///< secondary − primary at the start [length]
  PreviewPoint relativeVelocity;  ///< [length/time]
  /// Each galaxy's centre from the start to as far past pericentre (the starting separation
  /// again, or the whole ellipse of a circular orbit or one started at pericentre), about the
  /// pair's centre of mass at the origin, in the orbital (x–y) plane.
  std::array<std::vector<PreviewPoint>, 2> paths;
  std::array<DiskPreview, 2> disks;
};

/// The preview of a merger `spec` with `pathPoints` points per path (≥ 2) and `ringPoints` per
/// ring (≥ 3, plus the closing one), the rings ringScale disk scale lengths wide. Throws
/// InvalidParameter unless spec is a merger of 2 galaxies with an orbit makeGalaxyPair accepts.
MergerPreview mergerPreview(const ScenarioSpec& spec, int pathPoints = 256, int ringPoints = 64,
                            double ringScale = 3.0);

}  // namespace bhviz::sim
