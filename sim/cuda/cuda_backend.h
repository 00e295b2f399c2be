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
/// particles at N_leaf = 16), groups and CUB scratch, rounded up.
inline constexpr double kDeviceBytesPerParticle = 320.0;

/// "NVIDIA H200 (132 SMs, 139.8 GiB)"; throws CudaUnavailable when there is no device.
std::string deviceDescription();

/// Throws CudaUnavailable unless a device exists with memory for n particles.
void checkDeviceCapacity(std::size_t n);

/// A backend on the current device. Throws CudaUnavailable (see checkDeviceCapacity).
std::unique_ptr<Backend> makeCudaBackend(std::size_t expectedParticles);

/// A CUDA backend's particle arrays on the device, read-only, for a reader on the same device
/// (the app's CUDA–GL bridge). Key order, as after the last build; valid until the backend's
/// next step or upload.
struct DeviceView {
  const Vec4* posMass = nullptr;     ///< x, y, z [length]; w = mass [mass]
  const Vec4* vel = nullptr;         ///< [length/time]
  const std::uint8_t* tag = nullptr;  ///< component and galaxy (makeTag)
  const std::uint8_t* bin = nullptr;  ///< time bin
  const std::uint32_t* id = nullptr;  ///< particle ids
  std::size_t n = 0;                 ///< number of particles
  Stream stream = nullptr;           ///< the backend's stream: work queued on it follows the step
};

/// The device arrays of `backend` when it is a CUDA backend, else nullopt.
std::optional<DeviceView> deviceView(const Backend& backend);

/// The octree and the groups of the last force evaluation, where the CUDA backend keeps them
/// (to draw them without copying them to the host). The tree's arrays are in sim::Tree's layout;
/// cell c's particles start at particle first[c] of DeviceView (key order).
struct DeviceTreeView {
  std::vector<std::uint32_t> levelBegin;  ///< host copy, as Tree::levelBegin; empty: no tree yet
  const KeyFrame* frame = nullptr;        ///< 1 element: the cube the keys quantise
  const std::uint32_t* first = nullptr;   ///< per cell: first particle
  const std::uint8_t* level = nullptr;    ///< per cell: level (0 = root)
  const Box* groupBox = nullptr;          ///< per group: box of its active particles
  std::uint32_t groups = 0;               ///< number of groups (host copy kept by the backend)
};

/// The tree and groups of `backend` when it is a CUDA backend that has built one, else nullopt.
/// Does not wait for the device: work queued on the backend's stream reads them in order.
std::optional<DeviceTreeView> deviceTreeView(const Backend& backend);

/// Exact Plummer-softened direct summation in double precision on the GPU: acceleration and
/// potential of the targets from every particle (the accuracy reference of the benchmarks).
std::vector<Accel4d> directSumDevice(const Particles& p, const std::vector<std::uint32_t>& targets,
                                     double softening);

}  // namespace bhviz::sim::cuda
