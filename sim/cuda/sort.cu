// Bounding box, keys and sort: the first three stages of a tree build on the device.
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"

namespace bhviz::sim::cuda {

namespace {

struct PointBox {
  __host__ __device__ Box operator()(const Vec4& p) const {
    const Vec3 x = xyz(p);
    return {x, x};
  }
};

struct BoxUnion {
  __host__ __device__ Box operator()(Box a, const Box& b) const {
    grow(a, b);
    return a;
  }
};

__global__ void keyFrameKernel(const Box* box, KeyFrame* frame) { *frame = keyFrameFor(*box); }

__global__ void keysKernel(const Vec4* __restrict__ posMass, const KeyFrame* __restrict__ frame,
                           Curve curve, std::uint32_t n, std::uint64_t* __restrict__ keys,
                           std::uint32_t* __restrict__ order) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  keys[i] = encodeKey(curve, quantize(xyz(posMass[i]), *frame));
  order[i] = i;
}

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

void launchBoundingBox(const DeviceParticles& p, BuildWorkspace& ws, Stream stream) {
  ws.reserve(p.n);
  const auto points = thrust::make_transform_iterator(p.posMass.data(), PointBox{});
  const int n = static_cast<int>(p.n);
  std::size_t bytes = 0;
  BHVIZ_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, points, ws.box.data(), n, BoxUnion{},
                                             Box{}, stream));
  ws.temp.reserve(bytes);
  BHVIZ_CUDA_CHECK(cub::DeviceReduce::Reduce(ws.temp.data(), bytes, points, ws.box.data(), n,
                                             BoxUnion{}, Box{}, stream));
  keyFrameKernel<<<1, 1, 0, stream>>>(ws.box.data(), ws.frame.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
}

void launchKeys(const DeviceParticles& p, Curve curve, BuildWorkspace& ws, Stream stream) {
  ws.reserve(p.n);
  ws.current = 0;
  if (p.n == 0) return;
  keysKernel<<<blocksFor(p.n), kBlock, 0, stream>>>(p.posMass.data(), ws.frame.data(), curve,
                                                    static_cast<std::uint32_t>(p.n),
                                                    ws.keys[0].data(), ws.order[0].data());
  BHVIZ_CUDA_CHECK_LAUNCH();
}

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
