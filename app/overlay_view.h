#pragma once
// The bridge from the tree export to the overlay renderer: octree cells of a level range and
// walk groups as wireframe boxes.

#include <vector>

#include "render/vertex.h"
#include "sim/particles.h"
#include "sim/tree.h"

namespace bhviz::app {

/// The geometric cube of one cell (the octree's, not the tight box) in `colour`.
render::OverlayBox cellCube(const sim::Tree& tree, const sim::Particles& keyOrder,
                            std::uint32_t cell, const glm::vec4& colour);

/// The geometric cube of every cell with level in [minLevel, maxLevel], coloured by level
/// (coarse = blue … fine = red). `keyOrder` are the particles the tree was built on.
std::vector<render::OverlayBox> treeCellBoxes(const sim::Tree& tree, const sim::Particles& keyOrder,
                                              int minLevel, int maxLevel);

/// An axis-aligned box (a group's, a tight box) in `colour`.
render::OverlayBox boxOf(const sim::Box& box, const glm::vec4& colour);

/// The box of every walk group's active particles.
std::vector<render::OverlayBox> groupBoxes(const sim::Groups& groups);

}  // namespace bhviz::app
