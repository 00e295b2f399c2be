// Double-precision all-pairs reference on the GPU: one thread per target, sources staged
// through shared memory in tiles.
#include "sim/cuda/cuda_backend.h"
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/device_buffer.h"

namespace bhviz::sim::cuda {

namespace {

constexpr int kTile = 256;

__global__ void directSumKernel(const Vec4* __restrict__ posMass, std::uint32_t n,
                                const std::uint32_t* __restrict__ targets, std::uint32_t nTargets,
                                double eps2, Accel4d* __restrict__ out) {
  __shared__ Vec4 tile[kTile];
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t i = t < nTargets ? targets[t] : 0;
  const Vec4 xi = posMass[i];
  double ax = 0.0, ay = 0.0, az = 0.0, pot = 0.0;
  for (std::uint32_t base = 0; base < n; base += kTile) {
    const std::uint32_t j = base + threadIdx.x;
    __syncthreads();
    tile[threadIdx.x] = j < n ? posMass[j] : Vec4{0.0f, 0.0f, 0.0f, 0.0f};
    __syncthreads();
    const std::uint32_t count = min(static_cast<std::uint32_t>(kTile), n - base);
    for (std::uint32_t k = 0; k < count; ++k) {
      if (base + k == i) continue;
      const Vec4 s = tile[k];
      const double dx = double(s.x) - xi.x, dy = double(s.y) - xi.y, dz = double(s.z) - xi.z;
      const double r2 = dx * dx + dy * dy + dz * dz + eps2;
      const double rinv = rsqrt(r2);
      const double mrinv = double(s.w) * rinv;
      const double mrinv3 = mrinv * rinv * rinv;
      ax += mrinv3 * dx;
      ay += mrinv3 * dy;
      az += mrinv3 * dz;
      pot -= mrinv;
    }
  }
  if (t < nTargets) out[t] = {ax, ay, az, pot};
}

}  // namespace

std::vector<Accel4d> directSumDevice(const Particles& p, const std::vector<std::uint32_t>& targets,
                                     double softening) {
  const std::size_t n = p.size();
  std::vector<Accel4d> result(targets.size());
  if (targets.empty() || n == 0) return result;
  DeviceBuffer<Vec4> posMass;
  DeviceBuffer<std::uint32_t> d_targets;
  DeviceBuffer<Accel4d> out;
  posMass.reserve(n);
  d_targets.reserve(targets.size());
  out.reserve(targets.size());
  copyToDevice(posMass.data(), p.posMass.data(), n * sizeof(Vec4));
  copyToDevice(d_targets.data(), targets.data(), targets.size() * sizeof(std::uint32_t));
  directSumKernel<<<blocksFor(targets.size(), kTile), kTile>>>(
      posMass.data(), static_cast<std::uint32_t>(n), d_targets.data(),
      static_cast<std::uint32_t>(targets.size()), softening * softening, out.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  copyToHost(result.data(), out.data(), result.size() * sizeof(Accel4d));
  return result;
}

}  // namespace bhviz::sim::cuda
