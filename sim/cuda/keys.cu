// Keys on the device, the twin of cpu::computeKeys.
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"

namespace bhviz::sim::cuda {

namespace {

__global__ void keysKernel(const Vec4* __restrict__ posMass, const KeyFrame* __restrict__ frame,
                           Curve curve, std::uint32_t n, std::uint64_t* __restrict__ keys,
                           std::uint32_t* __restrict__ order) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  keys[i] = encodeKey(curve, quantize(xyz(posMass[i]), *frame));
  order[i] = i;
}

}  // namespace

void launchKeys(const DeviceParticles& p, Curve curve, BuildWorkspace& ws, Stream stream) {
  ws.reserve(p.n);
  ws.current = 0;
  if (p.n == 0) return;
  keysKernel<<<blocksFor(p.n), kBlock, 0, stream>>>(p.posMass.data(), ws.frame.data(), curve,
                                                    static_cast<std::uint32_t>(p.n),
                                                    ws.keys[0].data(), ws.order[0].data());
  BHVIZ_CUDA_CHECK_LAUNCH();
}

}  // namespace bhviz::sim::cuda
