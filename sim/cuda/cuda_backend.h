#pragma once
// The CUDA backend: every stage of a step on the GPU, the particles resident there. Plain C++
// header: the app includes it only when bhviz is built with CUDA (BHVIZ_HAVE_CUDA).

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/backend.h"
#include "sim/common/keys.h"
#include "sim/cuda/device_buffer.h"
#include "sim/direct_sum.h"

namespace bhviz::sim::cuda {

/// The GPU cannot run this simulation: no device, or not enough memory for N particles.
/// `auto` falls back to the CPU backend on it; an explicit `cuda` request reports it.
struct CudaUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Device memory a run needs per particle: two copies of the particle arrays (the sort's
/// gather), keys and permutations (double-buffered), the tree (about one cell per two
/// particles at N_leaf = 16), groups and CUB scratch, rounded up (320 B); the walk schedule's
/// last work per particle with its sort scratch and a group's expected work (12 B); each
/// cell's parent and arrival count for the moments' climb (8 B a cell, 4 B a particle); the tree
/// build's cell spans (2 B a particle; until 2026-11-29 its kept searches, ~4 B, which this sum
/// was rounded up with); a rebuild around the targets' scratch, reserved for all particles at its
/// first use (40 B: cuda/local_rebuild.h); the count that decides each group's expansion (4 B,
/// 2026-11-29: Groups::expandAs).
inline constexpr double kDeviceBytesPerParticle = 384.0;
/// The same for a rank of a distributed run, whose share also holds the LET cut's scratch
/// (sized by the tree: ~110 B a cell, and 16 B a particle), the exchange's domain and selection
/// arrays, the ORB's domain names and the LETs' bytes and walk records: measured 474 and
/// 508 B a particle (device_bytes_peak) on the two ranks of a 480 M merger (two H200s,
/// 2026-11-27, docs/BENCHMARKS.md "Past one GPU"), rounded up (the moments' climb and the tree
/// build's kept searches added ~4 B each since: 516, within it; the searches gave way to 2 B of
/// cell spans on 2026-11-29).
inline constexpr double kDeviceBytesPerRankParticle = 520.0;

/// "NVIDIA H200 (132 SMs, 139.8 GiB)"; throws CudaUnavailable when there is no device.
std::string deviceDescription();

/// Throws CudaUnavailable unless a device exists with memory for n particles of
/// `bytesPerParticle` each.
void checkDeviceCapacity(std::size_t n, double bytesPerParticle = kDeviceBytesPerParticle);

/// Makes device `ordinal` modulo the device count current for this host thread (each rank of a
/// distributed run on one machine its own GPU, round robin). Throws CudaUnavailable without one.
void useDevice(int ordinal);

/// A backend on the current device. Throws CudaUnavailable (see checkDeviceCapacity).
std::unique_ptr<Backend> makeCudaBackend(std::size_t expectedParticles,
                                         double bytesPerParticle = kDeviceBytesPerParticle);

/// Exact Plummer-softened direct summation in double precision on the GPU: acceleration and
/// potential of the targets from every particle (the accuracy reference of the benchmarks).
std::vector<Accel4d> directSumDevice(const Particles& p, const std::vector<std::uint32_t>& targets,
                                     double softening);

}  // namespace bhviz::sim::cuda
