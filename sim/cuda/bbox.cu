// Bounding box: the first stage of a tree build on the device, the twin of cpu::boundingBox;
// its key frame (keyFrameFor) is made here too, for the keys.
#include <thrust/iterator/transform_iterator.h>

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

}  // namespace bhviz::sim::cuda
