// The CUDA side of the CUDA–GL bridge: register, map, write, unmap. One thread per particle; the
// per-particle rule is vertexValue (app/vertex_rule.h), the same function the CPU path calls.
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include <string>

#include "app/cuda_gl_bridge.h"
#include "sim/cuda/cuda_check.cuh"

namespace bhviz::app {

namespace {

__global__ void writeVerticesKernel(std::uint32_t n, VertexRule rule,
                                    const sim::Vec4* __restrict__ posMass,
                                    const sim::Vec4* __restrict__ vel,
                                    const std::uint8_t* __restrict__ tag,
                                    const std::uint8_t* __restrict__ bin,
                                    float4* __restrict__ out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const sim::Vec4 x = posMass[i];
  out[i] = make_float4(x.x, x.y, x.z, vertexValue(rule, tag[i], vel[i], bin[i]));
}

cudaGraphicsResource_t resourceOf(void* r) { return static_cast<cudaGraphicsResource_t>(r); }

}  // namespace

static_assert(sizeof(render::ParticleVertex) == sizeof(float4),
              "the kernel writes one float4 per ParticleVertex");

CudaGlBridge::~CudaGlBridge() { unregister(); }

void CudaGlBridge::unregister() noexcept {
  if (m_resource != nullptr) {
    (void)cudaGraphicsUnregisterResource(resourceOf(m_resource));
    m_resource = nullptr;
  }
}

void CudaGlBridge::reg(const render::VertexBufferInfo& buffer) {
  unregister();
  cudaGraphicsResource_t resource = nullptr;
  const cudaError_t err = cudaGraphicsGLRegisterBuffer(&resource, buffer.name,
                                                       cudaGraphicsRegisterFlagsWriteDiscard);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: clear it so later CUDA checks do not see it
    throw InteropUnavailable(std::string("cudaGraphicsGLRegisterBuffer failed: ") +
                             cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
  }
  m_resource = resource;
  m_name = buffer.name;
  m_generation = buffer.generation;
}

void CudaGlBridge::write(const sim::cuda::DeviceView& p, const VertexRule& rule,
                         const render::VertexBufferInfo& buffer) {
  if (p.n > buffer.capacity) throw std::logic_error("CudaGlBridge: the vertex buffer is too small");
  if (m_resource == nullptr || buffer.name != m_name || buffer.generation != m_generation) {
    reg(buffer);
  }
  if (p.n == 0) return;
  const cudaStream_t stream = p.stream;
  cudaGraphicsResource_t resource = resourceOf(m_resource);
  BHVIZ_CUDA_CHECK(cudaGraphicsMapResources(1, &resource, stream));
  void* mapped = nullptr;
  std::size_t bytes = 0;
  const cudaError_t got = cudaGraphicsResourceGetMappedPointer(&mapped, &bytes, resource);
  if (got == cudaSuccess && bytes >= p.n * sizeof(float4)) {
    const auto n = static_cast<std::uint32_t>(p.n);
    writeVerticesKernel<<<sim::cuda::blocksFor(p.n), sim::cuda::kBlock, 0, stream>>>(
        n, rule, p.posMass, p.vel, p.tag, p.bin, static_cast<float4*>(mapped));
  }
  const cudaError_t launched = cudaGetLastError();
  // Unmap whatever happened: a buffer left mapped cannot be drawn.
  BHVIZ_CUDA_CHECK(cudaGraphicsUnmapResources(1, &resource, stream));
  BHVIZ_CUDA_CHECK(got);
  if (bytes < p.n * sizeof(float4)) {
    throw std::logic_error("CudaGlBridge: the mapped buffer is smaller than its capacity");
  }
  BHVIZ_CUDA_CHECK(launched);
}

}  // namespace bhviz::app
