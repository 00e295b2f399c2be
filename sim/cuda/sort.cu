// Sort on the device, the twin of cpu::sortOrder and cpu::reorder: the keys with their indices,
// then every particle array gathered into key order.
#include <cub/device/device_radix_sort.cuh>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"

namespace bhviz::sim::cuda {

namespace {

__global__ void gatherKernel(const std::uint32_t* __restrict__ order, std::uint32_t n,
                             const Vec4* __restrict__ posMass, const Vec4* __restrict__ vel,
                             const Vec4* __restrict__ accPot, const std::uint32_t* __restrict__ id,
                             const std::uint8_t* __restrict__ tag,
                             const std::uint8_t* __restrict__ bin, Vec4* __restrict__ posMassOut,
                             Vec4* __restrict__ velOut, Vec4* __restrict__ accPotOut,
                             std::uint32_t* __restrict__ idOut, std::uint8_t* __restrict__ tagOut,
                             std::uint8_t* __restrict__ binOut) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const std::uint32_t j = order[k];
  // Vec4 has float4's size and alignment: 16-byte loads and stores.
  reinterpret_cast<float4*>(posMassOut)[k] = reinterpret_cast<const float4*>(posMass)[j];
  reinterpret_cast<float4*>(velOut)[k] = reinterpret_cast<const float4*>(vel)[j];
  reinterpret_cast<float4*>(accPotOut)[k] = reinterpret_cast<const float4*>(accPot)[j];
  idOut[k] = id[j];
  tagOut[k] = tag[j];
  binOut[k] = bin[j];
}

}  // namespace

void launchSort(DeviceParticles& p, BuildWorkspace& ws, Stream stream) {
  ws.reserve(p.n);
  if (p.n == 0) return;
  const int n = static_cast<int>(p.n);
  const int cur = ws.current;
  cub::DoubleBuffer<std::uint64_t> keys(ws.keys[cur].data(), ws.keys[1 - cur].data());
  cub::DoubleBuffer<std::uint32_t> order(ws.order[cur].data(), ws.order[1 - cur].data());
  // The keys use 63 bits; radix sorting is stable, so equal keys keep their input order, as
  // cpu::sortOrder does.
  constexpr int kBeginBit = 0, kEndBit = 3 * kKeyBitsPerAxis;
  std::size_t bytes = 0;
  BHVIZ_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, order, n, kBeginBit, kEndBit, stream));
  ws.temp.reserve(bytes);
  BHVIZ_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(ws.temp.data(), bytes, keys, order, n, kBeginBit,
                                                   kEndBit, stream));
  // Keys and order travel together, so one selector names both.
  ws.current = keys.selector == 0 ? cur : 1 - cur;

  DeviceParticles& out = ws.scratch;
  out.resize(p.n);
  gatherKernel<<<blocksFor(p.n), kBlock, 0, stream>>>(
      ws.orderData(), static_cast<std::uint32_t>(p.n), p.posMass.data(), p.vel.data(),
      p.accPot.data(), p.id.data(), p.tag.data(), p.bin.data(), out.posMass.data(), out.vel.data(),
      out.accPot.data(), out.id.data(), out.tag.data(), out.bin.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  p.swap(out);
}

}  // namespace bhviz::sim::cuda
