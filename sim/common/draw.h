#pragma once
// What the library exports for drawing, and the per-box math the CPU loop and the CUDA kernel
// share: an octree cell's geometric cube and a group's box, each with its colour. The library
// says what to draw and how it looks (Box2D's b2DebugDraw); the app draws it.

#include <array>

#include "sim/common/hd.h"
#include "sim/common/keys.h"
#include "sim/common/vec.h"

namespace bhviz::sim {

/// A colour for drawing, RGB and opacity in [0, 1].
struct Rgba {
  float r = 0.0f, g = 0.0f, b = 0.0f, a = 0.0f;
};

/// Which boxes of the last force evaluation to export, and their colours.
struct BoxQuery {
  bool cells = false;  ///< the octree cells' geometric cubes of levels [minLevel, maxLevel]
  int minLevel = 0;
  int maxLevel = kMaxLevel;
  std::array<Rgba, kMaxLevel + 1> cellColour{};  ///< by level
  bool groups = false;  ///< the walk groups' boxes of their active particles
  Rgba groupColour{};
  /// A distributed run's ORB domains, one box per rank (other backends export none), coloured
  /// by rank (cyclic).
  bool domains = false;
  std::array<Rgba, 8> domainColour{};
};

/// One exported box: centre and half-size [length], colour. Cells come first, level by level,
/// then the groups, then the domains.
struct DrawBox {
  float centre[3];
  float halfSize[3];
  Rgba colour;
};

/// The levels [first, last] of a query's [minLevel, maxLevel] that a tree of `levels` levels
/// has (empty when first > last).
struct LevelSpan {
  int first = 0;
  int last = -1;
};
BHVIZ_HD inline LevelSpan levelSpan(int minLevel, int maxLevel, int levels) {
  return {minLevel < 0 ? 0 : minLevel, maxLevel < levels - 1 ? maxLevel : levels - 1};
}

BHVIZ_HD inline DrawBox drawBox(const Box& b, Rgba colour) {
  DrawBox d;
  d.centre[0] = 0.5f * (b.lo.x + b.hi.x);
  d.centre[1] = 0.5f * (b.lo.y + b.hi.y);
  d.centre[2] = 0.5f * (b.lo.z + b.hi.z);
  d.halfSize[0] = 0.5f * (b.hi.x - b.lo.x);
  d.halfSize[1] = 0.5f * (b.hi.y - b.lo.y);
  d.halfSize[2] = 0.5f * (b.hi.z - b.lo.z);
  d.colour = colour;
  return d;
}

/// The geometric cube of a cell of `level` holding the particle at `x`: the same quantisation
/// that made the keys, so any of the cell's particles gives the same cube.
BHVIZ_HD inline DrawBox cellDrawBox(Vec3 x, int level, const KeyFrame& frame, Rgba colour) {
  return drawBox(cellCube(quantize(x, frame), level, frame), colour);
}

/// A group's box of its active particles; a group without any (its box empty) gets a zero box
/// with no colour, so that a device writer that lists it draws nothing.
BHVIZ_HD inline DrawBox groupDrawBox(const Box& b, Rgba colour) {
  const bool empty = !(b.lo.x <= b.hi.x);
  return empty ? drawBox(Box{{0, 0, 0}, {0, 0, 0}}, Rgba{}) : drawBox(b, colour);
}

}  // namespace bhviz::sim
