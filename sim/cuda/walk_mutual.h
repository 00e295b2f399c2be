#pragma once
// The mutual near field on the device (P2pMode::Mutual, seed 004): the CUDA twin of
// cpu::walkGroupsMutual (sim/cpu/walk_mutual.cpp), the same pairs evaluated once where both
// sides need them. Plain C++: compiles under g++ and nvcc; the CUDA runtime stays inside
// walk_mutual.cu.

#include <cstddef>
#include <cstdint>

#include "sim/cuda/cuda_stages.h"
#include "sim/cuda/device_buffer.h"
#include "sim/cuda/device_properties.h"
#include "sim/cuda/groups.h"
#include "sim/cuda/walk.h"

namespace bhviz::sim::cuda {

/// The near field's device counters (launchWalkMutual resets them).
struct MutualCounters {
  unsigned long long oneWay;   ///< pair evaluations for one side (plain P2P's)
  unsigned long long both;     ///< pair evaluations that served both sides
  unsigned long long entries;  ///< (group, leaf) entries the walk recorded
  unsigned int nextGroup;      ///< the near field kernel's work counter
};

/// The near pairs of the last launchWalkMutual: pairs evaluated and, of them, those both ways
/// (as cpu::MutualCounts counts them, except that a group's pairs within itself go one way here:
/// the CPU takes them once), with the entries of the groups' leaf lists.
struct NearPairs {
  std::uint64_t pairs = 0, onceBoth = 0, entries = 0;
};

/// The mutual near field's device memory, kept from walk to walk (it grows, never shrinks).
struct MutualWorkspace {
  DeviceBuffer<std::uint64_t> keys[2];    ///< the lists' (group, leaf) keys, sorted into one
  DeviceBuffer<std::uint32_t> listBegin;  ///< per group (and one past): its first sorted key
  DeviceBuffer<std::uint32_t> groupOf;    ///< per particle: its group, or none
  DeviceBuffer<std::uint32_t> leafOf;     ///< per particle: its leaf
  DeviceBuffer<Vec4> counter;             ///< per particle: the counter-forces it received
  DeviceBuffer<MutualCounters> counters;
  DeviceBuffer<unsigned char> temp;  ///< CUB temporary storage
  PinnedBytes entries;               ///< the lists' length on its way to the host
  std::uint32_t capacity = 0;        ///< keys that keys[0] and keys[1] hold
};

/// The tree walk of `tree`'s own particles with the mutual near field: the walk writes the far
/// field of every group's targets and records the leaves it opens (WalkOutput::nearLeaves);
/// then, per group, the particles of its leaves, each (group, leaf) piece pair that both
/// groups' lists hold evaluated once by the lower group, its counter-forces added atomically,
/// the rest one way, as plain P2P. The targets' accPot is the plain walk's to fp32 rounding (the
/// sums' order, and the atomics', varies from run to run); the counters and `work` are plain's
/// exactly. Each group is walked by one warp (WalkSettings::maxParts is taken as 1).
/// Waits for the stream once (the lists' length, which the sort needs on the host: in a
/// distributed run this ends the local walk's overlap with the exchange), and when the lists
/// outgrow the workspace walks again into a larger one. Throws std::runtime_error, before
/// launching anything, when the workspace would not fit in the device's free memory.
void launchWalkMutual(const DeviceTree& tree, const DeviceGroups& groups, DeviceParticles& p,
                      const WalkSettings& s, std::uint32_t* work, WalkCounters* d_counters,
                      const DeviceProperties& device, MutualWorkspace& ws, Stream stream);

/// The near pairs of the last launchWalkMutual with `ws` (blocking; tests and benchmarks).
NearPairs downloadNearPairs(const MutualWorkspace& ws);

}  // namespace bhviz::sim::cuda
