#pragma once
// A tree rebuilt around the targets, on the device: the twin of cpu::coverTargets followed by
// cpu::rekeyCells (sim/cpu/local_rebuild.cpp). The cells that cover a substep's targets have
// their particles keyed again and sorted within their ranges; launchTree then builds the
// topology from the keys, which outside those cells are the last build's (docs/BENCHMARKS.md,
// "A tree rebuilt around the targets"). Plain C++: compiles under g++ and nvcc.

#include <cstddef>
#include <cstdint>

#include "sim/cuda/cuda_stages.h"
#include "sim/cuda/groups.h"

namespace bhviz::sim::cuda {

/// What the cover held: read back once, where the sort needs its size.
struct CoverCensus {
  std::uint32_t cells = 0;      ///< cells covering the targets [1]
  std::uint32_t particles = 0;  ///< their particles, keyed and sorted again [1]
  /// Level of the smallest cell holding every target (their keys share its prefix, which the
  /// sort skips); kMaxLevel + 1 where there are no targets.
  std::uint32_t commonLevel = 0;
};

/// Scratch of launchCoverAndRekey, kept between substeps (grown, never shrunk): 40 bytes a
/// particle once reserved for all of them.
struct CoverWorkspace {
  DeviceBuffer<std::uint32_t> activeBefore;  ///< targets before each particle (n + 1 entries)
  DeviceBuffer<std::uint32_t> cellOf;        ///< covering cell + 1 of each particle, 0: none
  DeviceBuffer<std::uint32_t> covered;       ///< the covered particles' slots, ascending
  DeviceBuffer<std::uint64_t> keys[2];       ///< their new keys (radix sort ping-pong)
  DeviceBuffer<std::uint32_t> from[2];       ///< their places among `covered` (ping-pong)
  DeviceBuffer<std::uint32_t> carried;       ///< the carried values of the covered, gathered
  DeviceBuffer<CoverCensus> census;          ///< 1 element; CoverCensus::cells … on the device
  PinnedBytes censusHost;                    ///< the census read back (readBack)
  DeviceBuffer<std::uint32_t> selected;      ///< 1 element: DeviceSelect's count
  DeviceBuffer<unsigned char> temp;          ///< CUB temporary storage

  /// Sizes every buffer for a cover of all n particles, the CUB storage too: a caller that times
  /// the cover reserves first, so that no allocation is in its time.
  void reserve(std::size_t n);
};

/// The cells of `tree` (the last build's, its particles moved since but in its order) that
/// cover the targets of `rule`: from the smallest cell holding every target down, a cell holding
/// targets is split into its children while they are fewer than `share` of its particles (as
/// cpu::coverTargets). Their particles get new keys from their positions in ws.frame, clamped
/// into their cell's cube, and are sorted within their cell's range (stable); every particle
/// array follows, and so does `carried` (one value a particle, where not null). Afterwards
/// ws.keysData() holds the keys of the whole order, sorted (the last build's outside the cover),
/// for launchTree; ws.orderData() stays the last whole sort's. Waits for the device once, for the
/// census (the sort's size).
CoverCensus launchCoverAndRekey(DeviceParticles& p, const DeviceTree& tree, const ActiveRule& rule,
                                double share, Curve curve, BuildWorkspace& ws, CoverWorkspace& cw,
                                std::uint32_t* carried, Stream stream);

}  // namespace bhviz::sim::cuda
