#pragma once
// What the tests of the device's sort and tree build share (test_cuda_stages,
// test_cuda_sort_and_tree): a sort, or a build's sort and tree, on the device, and the check
// against the CPU's stable sort, bit for bit.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "sim/cpu/cpu_stages.h"
#include "sim/cuda/cuda_stages.h"
#include "tree_compare.h"

namespace bhviz::test {

/// Uploads `h` and runs the stages before the tree (box, keys, sort) on the device; returns the
/// sorted keys, which the CPU's tree is built from.
inline std::vector<std::uint64_t> sortOnDevice(const sim::Particles& h,
                                               sim::cuda::DeviceParticles& d,
                                               sim::cuda::BuildWorkspace& ws) {
  sim::cuda::uploadParticles(h, d);
  sim::cuda::launchBoundingBox(d, ws, nullptr);
  sim::cuda::launchKeys(d, sim::Curve::Hilbert, ws, nullptr);
  sim::cuda::launchSort(d, ws, nullptr);
  return sim::cuda::downloadKeys(ws, h.size());
}

/// After a sort of `h` on the device (`keys`: the CPU's keys of h, in input order): the stable
/// permutation, the sorted keys and every gathered particle array must be the CPU's, bit for bit.
/// Returns the sorted keys, which the CPU's tree is built from.
inline std::vector<std::uint64_t> expectTheCpuSort(const sim::Particles& h,
                                                   const std::vector<std::uint64_t>& keys,
                                                   const sim::cuda::DeviceParticles& d,
                                                   const sim::cuda::BuildWorkspace& ws) {
  const std::vector<std::uint32_t> order = sim::cpu::sortOrder(keys);
  EXPECT_SAME_ARRAY(sim::cuda::downloadOrder(ws, h.size()), order);
  std::vector<std::uint64_t> sortedKeys(h.size());
  for (std::size_t k = 0; k < h.size(); ++k) sortedKeys[k] = keys[order[k]];
  EXPECT_SAME_ARRAY(sim::cuda::downloadKeys(ws, h.size()), sortedKeys);
  sim::Particles sorted = h, gpuSorted;
  sim::cpu::reorder(sorted, order);
  sim::cuda::downloadParticles(d, gpuSorted);
  EXPECT_SAME_ARRAY(gpuSorted.posMass, sorted.posMass);
  EXPECT_SAME_ARRAY(gpuSorted.vel, sorted.vel);
  EXPECT_SAME_ARRAY(gpuSorted.accPot, sorted.accPot);
  EXPECT_SAME_ARRAY(gpuSorted.id, sorted.id);
  EXPECT_SAME_ARRAY(gpuSorted.tag, sorted.tag);
  EXPECT_SAME_ARRAY(gpuSorted.bin, sorted.bin);
  return sortedKeys;
}

/// The sort and the tree of a build as launchBuild makes them (launchSortAndTree: the keys sorted
/// on the digits the tree's levels read, the runs of equal sorted digits put in order afterwards),
/// on `h` uploaded again: the permutation, the sorted keys and every gathered array must be the
/// CPU's full stable sort's, bit for bit. Returns the CPU's sorted keys, which its tree is built
/// from.
inline std::vector<std::uint64_t> sortAndTreeOnDevice(const sim::Particles& h, int nLeaf,
                                                      sim::cuda::DeviceParticles& d,
                                                      sim::cuda::BuildWorkspace& ws,
                                                      sim::cuda::DeviceTree& tree) {
  sim::cuda::uploadParticles(h, d);
  sim::cuda::launchBoundingBox(d, ws, nullptr);
  sim::cuda::launchKeys(d, sim::Curve::Hilbert, ws, nullptr);
  sim::cuda::launchSortAndTree(d, ws, nLeaf, tree, nullptr);
  EXPECT_EQ(ws.sortedLevels, sim::kMaxLevel) << "the runs' order completes the sort";
  const sim::KeyFrame frame = sim::keyFrameFor(sim::cpu::boundingBox(h.posMass));
  return expectTheCpuSort(h, sim::cpu::computeKeys(h.posMass, frame, sim::Curve::Hilbert), d, ws);
}

}  // namespace bhviz::test
