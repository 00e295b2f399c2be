// The predict and integrate stages on the device, the twins of cpu::openKicks, cpu::drift and
// cpu::closeKicks: time bins, kicks and the drift (sim/common/timestep.h), one thread per
// particle.
#include "sim/common/timestep.h"
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"

namespace bhviz::sim::cuda {

namespace {

/// Half steps of every bin, computed on the host exactly as the CPU backend does
/// (Clock::binDt), so both backends kick by the same floats.
struct HalfSteps {
  float dt[kMaxBinDepthLimit + 1];
};

HalfSteps halfSteps(const Clock& clock) {
  HalfSteps h{};
  for (int b = 0; b <= clock.depth; ++b) h.dt[b] = 0.5f * clock.binDt(b);
  return h;
}

__device__ float magnitude(const Vec4& a) { return sqrtf(a.x * a.x + a.y * a.y + a.z * a.z); }

/// *deepest = max(*deepest, b over the block's threads), by one atomic per block: every thread
/// of the block calls it. (One atomic per warp, all on one address, took 0.11 ms of a block
/// substep's 0.12 at 8 M particles on an H200.)
__device__ void maxOfBlock(int b, int* deepest) {
  for (int offset = 16; offset > 0; offset >>= 1)
    b = max(b, __shfl_down_sync(0xffffffffu, b, offset));
  __shared__ int warpDeepest[kBlock / 32];
  if ((threadIdx.x & 31) == 0) warpDeepest[threadIdx.x / 32] = b;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < kBlock / 32; ++w) b = max(b, warpDeepest[w]);
  if (b > 0) atomicMax(deepest, b);
}

/// The bin a particle whose step ends at `tick` takes at the open kicks there (timestep.h), from
/// the acceleration it has then: the open kicks' choice, and the close kicks' forecast of it.
__device__ int binAtOpenKicks(const Vec4& a, std::uint64_t tick, int depth, float eps, float eta,
                              float dtMax) {
  return nextBin(wantedBin(magnitude(a), eps, eta, dtMax, depth), tick, depth);
}

// One block of kBlock threads: the deepest bin is reduced through shared memory per block.
__global__ void __launch_bounds__(kBlock)
    openKicksKernel(std::uint32_t n, std::uint64_t tick, int depth, float eps, float eta,
                    float dtMax, HalfSteps half, Vec4* __restrict__ vel,
                    const Vec4* __restrict__ accPot, std::uint8_t* __restrict__ bin,
                    int* __restrict__ deepest) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  int b = 0;
  if (i < n) {
    b = min(static_cast<int>(bin[i]), depth);
    if (isActive(b, tick, depth)) {
      const Vec4 a = accPot[i];
      b = binAtOpenKicks(a, tick, depth, eps, eta, dtMax);
      bin[i] = static_cast<std::uint8_t>(b);
      Vec4 v = vel[i];
      kick(v, a, half.dt[b]);
      vel[i] = v;
    }
  }
  if (deepest != nullptr) maxOfBlock(b, deepest);  // null: one bin (shared steps)
}

__global__ void driftKernel(std::uint32_t n, float dt, Vec4* __restrict__ posMass,
                            Vec4* __restrict__ vel, std::uint32_t* __restrict__ bad) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Vec4 x = posMass[i];
  Vec4 v = vel[i];
  drift(x, v, dt);  // v.w: the rounding carried to the next drift
  posMass[i] = x;
  vel[i] = v;
  if (bad != nullptr && !(allFinite(x) && allFinite(v))) atomicOr(bad, 1u);
}

__global__ void __launch_bounds__(kBlock)
    closeKicksKernel(std::uint32_t n, std::uint64_t tick, int depth, HalfSteps half,
                     Vec4* __restrict__ vel, const Vec4* __restrict__ accPot,
                     const std::uint8_t* __restrict__ bin, std::uint32_t* __restrict__ bad,
                     NextOpenKicks next) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  int forecast = 0;  // the bin particle i takes at the next open kicks
  if (i < n) {
    const int b = min(static_cast<int>(bin[i]), depth);
    forecast = b;
    if (isActive(b, tick, depth)) {
      Vec4 v = vel[i];
      const Vec4 a = accPot[i];
      kick(v, a, half.dt[b]);
      vel[i] = v;
      if (bad != nullptr && !(allFinite(a) && allFinite(v))) atomicOr(bad, 1u);
      forecast = binAtOpenKicks(a, tick, depth, next.eps, next.eta, next.dtMax);
    }
  }
  if (next.deepest != nullptr) maxOfBlock(forecast, next.deepest);
}

}  // namespace

void launchOpenKicks(DeviceParticles& p, const Clock& clock, const SimParams& params,
                     int* d_deepest, Stream stream) {
  if (d_deepest != nullptr) BHVIZ_CUDA_CHECK(cudaMemsetAsync(d_deepest, 0, sizeof(int), stream));
  if (p.n == 0) return;  // a rank of a distributed run may hold none
  openKicksKernel<<<blocksFor(p.n), kBlock, 0, stream>>>(
      static_cast<std::uint32_t>(p.n), clock.tick, clock.depth, params.softening, params.eta,
      static_cast<float>(clock.dtMax), halfSteps(clock), p.vel.data(), p.accPot.data(),
      p.bin.data(), d_deepest);
  BHVIZ_CUDA_CHECK_LAUNCH();
}

void launchDrift(DeviceParticles& p, float dt, Stream stream, std::uint32_t* d_bad) {
  if (p.n == 0) return;
  driftKernel<<<blocksFor(p.n), kBlock, 0, stream>>>(static_cast<std::uint32_t>(p.n), dt,
                                                     p.posMass.data(), p.vel.data(), d_bad);
  BHVIZ_CUDA_CHECK_LAUNCH();
}

void launchCloseKicks(DeviceParticles& p, const Clock& clock, Stream stream, std::uint32_t* d_bad,
                      const NextOpenKicks& next) {
  if (next.deepest != nullptr) {
    BHVIZ_CUDA_CHECK(cudaMemsetAsync(next.deepest, 0, sizeof(int), stream));
  }
  if (p.n == 0) return;
  closeKicksKernel<<<blocksFor(p.n), kBlock, 0, stream>>>(
      static_cast<std::uint32_t>(p.n), clock.tick, clock.depth, halfSteps(clock), p.vel.data(),
      p.accPot.data(), p.bin.data(), d_bad, next);
  BHVIZ_CUDA_CHECK_LAUNCH();
}

}  // namespace bhviz::sim::cuda
