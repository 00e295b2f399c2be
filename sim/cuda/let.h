#pragma once
// The CUDA twin of the LET cut (sim::essentialTree, sim/cpu/let.cpp): the part of the built
// tree another rank's region needs, cut on the device level by level, so that only the LET
// comes to the host. Plain C++: compiles under g++ and nvcc.

#include "sim/cuda/cuda_stages.h"
#include "sim/let.h"

namespace bhviz::sim::cuda {

/// The device memory of a cut, kept between cuts (sized by the tree: it bounds every LET).
struct LetScratch {
  DeviceBuffer<std::uint32_t> frontier[2], children, childOffset, particles, particleOffset;
  DeviceBuffer<unsigned char> temp;
  DeviceBuffer<std::uint32_t> total;
  DeviceBuffer<std::uint32_t> first, count, child;
  DeviceBuffer<std::uint8_t> childCount, level;
  DeviceBuffer<Vec4> comMass, posMass;
  DeviceBuffer<Quadrupole> quad;
  DeviceBuffer<Box> box;
  DeviceBuffer<float> bmax, opening;
};

/// The LET of `tree` (particles `p`, key order; moments made with `mac`, frame `frame`) for
/// `region`, in sim::essentialTree's layout and order (blocking).
LetTree cutEssentialTree(const DeviceTree& tree, const DeviceParticles& p, const KeyFrame& frame,
                         const MacSetup& mac, const TargetRegion& region, LetScratch& scratch,
                         Stream stream);

/// An imported LET on the device: the received arrays, and the walk records made from them.
struct ImportedLet {
  DeviceBuffer<WalkCell> records;
  DeviceBuffer<Box> box;
  DeviceBuffer<Vec4> posMass, comMass;
  DeviceBuffer<Quadrupole> quad;
  DeviceBuffer<float> opening;
  DeviceBuffer<std::uint32_t> first, count, child;
  DeviceBuffer<std::uint8_t> childCount;
};

/// Uploads `let` (blocking) and queues on `stream` the making of its walk records (walkCellOf,
/// as the moments stage makes the local tree's): a host loop over a 16 M tree's 440,000 LET
/// cells did it before.
void uploadImportedLet(const LetTree& let, ImportedLet& d, Stream stream);

}  // namespace bhviz::sim::cuda
