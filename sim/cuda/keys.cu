// Keys on the device, the twin of cpu::computeKeys. Peano–Hilbert keys come from the curve's
// table of states (hilbert_table.h: the same keys as the CPU's transform, in a quarter of its
// instructions), copied into each block's shared memory; each thread then keys a few particles.
#include "sim/common/hilbert_table.h"
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"

namespace bhviz::sim::cuda {

namespace {

__device__ const HilbertTable kDeviceHilbertTable = kHilbertTable;

/// Particles a thread keys: few enough blocks that copying the table into each (6 KB) costs
/// little, enough to fill the device.
constexpr std::uint32_t kKeysPerThread = 4;

template <Curve kCurve>
__global__ void keysKernel(const Vec4* __restrict__ posMass, const KeyFrame* __restrict__ frame,
                           std::uint32_t n, std::uint64_t* __restrict__ keys,
                           std::uint32_t* __restrict__ order) {
  constexpr unsigned kWords = sizeof(HilbertTable) / sizeof(std::uint32_t);
  static_assert(sizeof(HilbertTable) % sizeof(std::uint32_t) == 0);
  __shared__ std::uint32_t words[kWords];  // a HilbertTable
  const auto& table = *reinterpret_cast<const HilbertTable*>(words);
  if constexpr (kCurve == Curve::Hilbert) {
    const auto* from = reinterpret_cast<const std::uint32_t*>(&kDeviceHilbertTable);
    for (unsigned k = threadIdx.x; k < kWords; k += blockDim.x) words[k] = from[k];
    __syncthreads();
  }
  const KeyFrame f = *frame;
  const std::uint32_t stride = gridDim.x * blockDim.x;
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const KeyCoords c = quantize(xyz(posMass[i]), f);
    if constexpr (kCurve == Curve::Hilbert) {
      keys[i] = hilbertEncodeByTable(c, table.top, &table.pair[0][0]);
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
  const unsigned blocks = blocksFor((p.n + kKeysPerThread - 1) / kKeysPerThread);
  const auto kernel =
      curve == Curve::Hilbert ? keysKernel<Curve::Hilbert> : keysKernel<Curve::Morton>;
  kernel<<<blocks, kBlock, 0, stream>>>(p.posMass.data(), ws.frame.data(), n, ws.keys[0].data(),
                                        ws.order[0].data());
  BHVIZ_CUDA_CHECK_LAUNCH();
}

}  // namespace bhviz::sim::cuda
