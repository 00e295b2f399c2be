#pragma once
// The CUDA backend's drawing export: the boxes of a BoxQuery written by kernels from the device
// tree and groups, in the order the CPU backend's sim/cpu/draw.cpp makes them on the host.

#include <cstdint>
#include <vector>

#include "sim/common/draw.h"
#include "sim/cuda/device_buffer.h"

namespace bhviz::sim::cuda {

/// Where the boxes come from: the device tree and groups of the last force evaluation.
struct DrawSource {
  const std::vector<std::uint32_t>* levelBegin = nullptr;  ///< host copy, as Tree::levelBegin
  const KeyFrame* frame = nullptr;       ///< device: 1 element, the cube the keys quantise
  const std::uint32_t* first = nullptr;  ///< device, per cell: first particle (key order)
  const std::uint8_t* level = nullptr;   ///< device, per cell: level
  const Vec4* posMass = nullptr;         ///< device, key order
  const Box* groupBox = nullptr;         ///< device, per group: box of its active particles
  std::uint32_t groups = 0;              ///< number of groups (host copy)
};

/// The number of boxes `q` exports of `src`.
std::size_t drawBoxCount(const DrawSource& src, const BoxQuery& q);

/// Launches the kernels that write those boxes into device memory `out` on `stream`. Throws
/// on a launch error; does not wait.
void launchDrawBoxes(const DrawSource& src, const BoxQuery& q, DrawBox* out, Stream stream);

}  // namespace bhviz::sim::cuda
