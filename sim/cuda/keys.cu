// Keys on the device, the twin of cpu::computeKeys. Peano–Hilbert keys come from the curve's
// table of states (hilbert_table.h: the same keys as Skilling's transform, keys.h, in a quarter of
// its instructions), copied into each block's shared memory; each thread then keys a few
// particles.
#include <algorithm>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"
#include "sim/cuda/hilbert_table.cuh"

namespace bhviz::sim::cuda {

namespace {

/// Particles a thread keys at least, and blocks at most (about one wave of an H200): few enough
/// blocks that copying the table into each (6 KB) costs little, enough to fill the device.
constexpr std::uint32_t kKeysPerThread = 4;
constexpr unsigned kMaxKeysBlocks = 1024;

template <Curve kCurve>
__global__ void keysKernel(const Vec4* __restrict__ posMass, const KeyFrame* __restrict__ frame,
                           std::uint32_t n, std::uint64_t* __restrict__ keys,
                           std::uint32_t* __restrict__ order) {
  __shared__ HilbertTable table;
  if constexpr (kCurve == Curve::Hilbert) {
    static_assert(sizeof(HilbertTable) % sizeof(uint4) == 0 && alignof(HilbertTable) >= 16);
    const auto* from = reinterpret_cast<const uint4*>(&kDeviceHilbertTable);
    auto* to = reinterpret_cast<uint4*>(&table);
    for (unsigned k = threadIdx.x; k < sizeof(HilbertTable) / sizeof(uint4); k += blockDim.x) {
      to[k] = from[k];
    }
    __syncthreads();
  }
  const KeyFrame f = *frame;
  const std::uint32_t stride = gridDim.x * blockDim.x;
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const KeyCoords c = quantize(xyz(posMass[i]), f);
    if constexpr (kCurve == Curve::Hilbert) {
      keys[i] = hilbertEncodeByTable(c, table);
    } else {
      keys[i] = mortonEncode(c);
    }
    order[i] = i;
  }
}

}  // namespace

void launchKeys(const DeviceParticles& p, Curve curve, BuildWorkspace& ws, Stream stream) {
  ws.reserve(p.n);
  ws.current = 0;
  if (p.n == 0) return;
  const auto n = static_cast<std::uint32_t>(p.n);
  const unsigned blocks =
      std::min(blocksFor((p.n + kKeysPerThread - 1) / kKeysPerThread), kMaxKeysBlocks);
  const auto kernel =
      curve == Curve::Hilbert ? keysKernel<Curve::Hilbert> : keysKernel<Curve::Morton>;
  kernel<<<blocks, kBlock, 0, stream>>>(p.posMass.data(), ws.frame.data(), n, ws.keys[0].data(),
                                        ws.order[0].data());
  BHVIZ_CUDA_CHECK_LAUNCH();
}

}  // namespace bhviz::sim::cuda
