#pragma once
// A local essential tree (LET, Bonsai: Bédorf et al. 2014): the part of one rank's tree that the
// particles of another rank need. The sender walks its tree against the receiver's region (the
// box of its groups) with the walk's own MAC; a cell the MAC accepts for the whole region is
// sent as a multipole, a leaf it opens is sent with its particles, and every child of an opened
// cell is sent. A LET is a Tree like the local one (the walk's record layout, breadth-first,
// children contiguous), so the receiver walks it with the same code; its cells' first/count
// index the LET's own particles. The region's groups lie inside the region's box and have
// |a_old| ≥ its minimum, and every MAC is monotone in both, so a cell accepted for the region is
// accepted by each of its groups: no group needs the particles of a cell sent as a multipole.
// (The sender accepts with a small margin, so that a receiver's own rounding cannot undo it:
// kLetGuard.)

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/common/mac.h"
#include "sim/orb.h"
#include "sim/tree.h"

namespace bhviz::sim {

/// A cell is sent as a multipole only if the MAC accepts it for the region with its opening
/// value this much larger. The receiver tests its groups with its own arithmetic (the GPU walk
/// contracts to FMA, the host does not), and a group on the region's face is exactly as far from
/// a cell as the region is: without the margin a cell accepted here by a hair could be opened
/// there by a rounding, and a multipole sent without its particles would be lost.
inline constexpr float kLetGuard = 1.0f + 0x1.0p-14f;

/// Where a rank's targets are: what another rank cuts its LET for.
struct TargetRegion {
  Box box;                  ///< union of the boxes of the groups (their active particles)
  float accMin = INFINITY;  ///< smallest |a_old| of any group (the acceleration MAC)
  bool any() const { return box.lo.x <= box.hi.x; }
};

struct LetTree {
  /// Cells (first/count index posMass below); moments as the sender's moments stage made them.
  Tree tree;
  /// The particles of the opened leaves [length]; w = mass.
  std::vector<Vec4> posMass;

  std::size_t cellCount() const { return tree.cellCount(); }
  bool empty() const { return tree.cellCount() == 0; }
};

/// The LET of `tree` (particles `posMass`, moments made with `mac`) for `region`; empty when the
/// region has no targets or the tree no cells.
LetTree essentialTree(const Tree& tree, const std::vector<Vec4>& posMass, const MacSetup& mac,
                      const TargetRegion& region);

/// A rank's own tree and an essential tree it imported as one tree: from the root down, while
/// both trees hold a cell of the same cube of their common key frame, one merged cell (the two
/// cells' moments combined, its opening value made with `mac`) whose children are both cells'
/// children, merged again where both hold one of the same cube; where either stops (a leaf, or
/// a LET cell sent as a multipole), the two cells sit under it whole. Two trees made a far
/// group take two cells where one tree had one (a cell across the domain face is two): the
/// merged tree gives it one again (docs/ARCHITECTURE.md, "What the split into trees costs").
/// Both trees must be cut in one key frame (a distributed run's), the LET from the root.
/// With `domains` (the run's cuts), a merged cell holds the parts of its cube both cells held,
/// and its opening value takes that share (paramOfParts); `localParts` are those of `local`'s
/// cells when it is itself a merged tree (MergedTree::parts; empty: one part each).
struct MergedTree {
  /// Its first/count index `sources`; for walking only (its level table is not one).
  Tree tree;
  std::vector<Vec4> sources;  ///< the local particles, then the LET's
  /// Per cell: the parts of its cube it holds (one per domain that meets the cube: a rank's own
  /// cell or a LET cell holds one, a merged cell both cells' parts).
  std::vector<std::uint32_t> parts;
};
MergedTree mergeEssentialTree(const Tree& local, const std::vector<Vec4>& posMass,
                              const LetTree& let, const MacSetup& mac,
                              const OrbCutsView* domains = nullptr,
                              const std::vector<std::uint32_t>& localParts = {});

/// The sizes of a LET as bytes (letLayout).
struct LetSize {
  std::uint64_t bytes = 0, cells = 0, particles = 0;
};

/// The bytes a LET travels as begin with this header.
struct LetHeader {
  std::uint32_t magic;
  std::uint32_t levels;  ///< entries of levelBegin
  std::uint64_t cells;
  std::uint64_t particles;
  KeyFrame frame;
};
inline constexpr std::uint32_t kLetMagic = 0x4c455432;  // "LET2": arrays 16-byte aligned

/// Where the header and the arrays of a LET lie in its bytes (offsets from its first byte):
/// the header, then levelBegin and the tree's arrays in Tree's order, then the particles, each
/// at a multiple of 16 bytes and zero-padded, so that a device reads them in place (a CUDA
/// backend cuts and walks LETs as bytes in device memory); the size is a multiple of 16, so
/// that LETs laid end to end stay aligned.
struct LetLayout {
  std::size_t levelBegin, first, count, child, childCount, level, comMass, quad, box, bmax, opening,
      posMass;
  std::size_t size;
};
LetLayout letLayout(std::uint64_t levels, std::uint64_t cells, std::uint64_t particles);

/// Calls fn(offset, array, count) for each array of a LET after levelBegin, in the layout's
/// order: the per-cell arrays of `cells` (a Tree, or a device cut's buffers: the members named
/// as Tree's), `cells` long, then `particles`, `particleCount` long. The one list of them that
/// writing, reading and the device's cut share.
template <typename Cells, typename ParticleArray, typename Fn>
void forEachLetArray(const LetLayout& l, Cells& cells, std::uint64_t cellCount,
                     ParticleArray& particles, std::uint64_t particleCount, Fn&& fn) {
  fn(l.first, cells.first, cellCount);
  fn(l.count, cells.count, cellCount);
  fn(l.child, cells.child, cellCount);
  fn(l.childCount, cells.childCount, cellCount);
  fn(l.level, cells.level, cellCount);
  fn(l.comMass, cells.comMass, cellCount);
  fn(l.quad, cells.quad, cellCount);
  fn(l.box, cells.box, cellCount);
  fn(l.bmax, cells.bmax, cellCount);
  fn(l.opening, cells.opening, cellCount);
  fn(l.posMass, particles, particleCount);
}

/// The bytes a LET travels as, and back. fromBytes throws std::invalid_argument on a buffer
/// that is not a whole, consistent LET (sizes, links and particle ranges checked).
std::vector<std::byte> toBytes(const LetTree& let);
/// toBytes appended to `out` (one allocation for all of a rank's LETs); returns their size.
std::size_t appendBytes(const LetTree& let, std::vector<std::byte>& out);
LetTree letFromBytes(const std::byte* data, std::size_t size);

}  // namespace bhviz::sim
