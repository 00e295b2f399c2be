#pragma once
// The CUDA twin of the LET cut (sim::essentialTree, sim/cpu/let.cpp): the part of the built
// tree another rank's region needs, cut on the device level by level, so that only the LET
// comes to the host. Plain C++: compiles under g++ and nvcc.

#include "sim/cuda/cuda_stages.h"
#include "sim/let.h"

namespace bhviz::sim::cuda {

/// Where a level of a device cut stands: its cells (the frontier), the LET index of its first
/// cell and of its first leaf particle. Written on the device level after level; the host reads
/// the table once, when the cut is queued whole.
struct LetLevelState {
  std::uint32_t cells, base, particleBase;
};

/// The device memory of a cut, kept between cuts (sized by the tree: it bounds every LET).
struct LetScratch {
  DeviceBuffer<std::uint32_t> frontier[2];
  DeviceBuffer<std::uint64_t> counts;     ///< a level's children and particles, packed
  DeviceBuffer<std::uint64_t> blockSums;  ///< per block of the cut's grid, its cells' counts
  unsigned blocks = 0;                    ///< the cut's grid (0: not chosen yet)
  DeviceBuffer<LetLevelState> state;      ///< per level, and one past the last
  DeviceBuffer<std::uint32_t> first, count, child;
  DeviceBuffer<std::uint8_t> childCount, level;
  DeviceBuffer<Vec4> comMass, posMass;
  DeviceBuffer<Quadrupole> quad;
  DeviceBuffer<Box> box;
  DeviceBuffer<float> bmax, opening;
};

/// Device bytes that grow at the end keeping what they hold: a rank's LETs laid end to end.
class DeviceBytes {
 public:
  /// Makes room for n more bytes at the end, zeroed on `stream`; returns where they begin.
  std::byte* append(std::size_t n, Stream stream);
  /// n bytes, the old contents discarded.
  std::byte* resize(std::size_t n);
  void clear() { m_size = 0; }
  std::byte* data() { return m_buffer.data(); }
  const std::byte* data() const { return m_buffer.data(); }
  std::size_t size() const { return m_size; }

 private:
  DeviceBuffer<std::byte> m_buffer;
  std::size_t m_size = 0;
};

/// The LET of `tree` (particles `p`, key order; moments made with `mac`, frame `frame`) for
/// `region`, in sim::essentialTree's layout and order (blocking): cutEssentialTreeBytes into
/// `bytes` (emptied first), brought to the host once.
LetTree cutEssentialTree(const DeviceTree& tree, const DeviceParticles& p, const KeyFrame& frame,
                         const MacSetup& mac, const TargetRegion& region, LetScratch& scratch,
                         DeviceBytes& bytes, Stream stream);

/// cutEssentialTree, its LET written as bytes (sim/let.h: appendBytes's, byte for byte) onto
/// the end of `out`, queued on `stream`; returns its sizes (zeros: no LET).
LetSize cutEssentialTreeBytes(const DeviceTree& tree, const DeviceParticles& p,
                              const KeyFrame& frame, const MacSetup& mac,
                              const TargetRegion& region, LetScratch& scratch, DeviceBytes& out,
                              Stream stream);

/// What the walk reads of a LET held as bytes in device memory.
struct LetView {
  const WalkCell* records = nullptr;  ///< made by importLetBytes
  const Box* box = nullptr;           ///< in the bytes
  const Vec4* posMass = nullptr;      ///< in the bytes
  LetSize size;
};

/// Checks a LET's bytes in device memory (the header on the host, every cell's links and
/// particle range on the device: letFromBytes's checks) and makes its walk records into
/// `records` on `stream` (blocking). The bytes must stay until the walk has read them. Throws
/// std::invalid_argument on bytes that are not a whole, consistent LET.
LetView importLetBytes(const std::byte* bytes, std::size_t size, DeviceBuffer<WalkCell>& records,
                       DeviceBuffer<std::uint32_t>& fault, Stream stream);

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
