// The CUDA side of the CUDA–GL bridge: register, map, write, unmap. One thread per particle; the
// per-particle rule is vertexValue (app/vertex_rule.h), the same function the CPU path calls.
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "app/bridge/cuda_gl_bridge.h"
#include "sim/cuda/cuda_check.cuh"

namespace bhviz::app {

namespace {

__global__ void writeVerticesKernel(
    std::uint32_t n, VertexRule rule, const sim::Vec4* __restrict__ posMass,
    const sim::Vec4* __restrict__ vel, const std::uint8_t* __restrict__ tag,
    const std::uint8_t* __restrict__ bin, const std::uint32_t* __restrict__ id,
    const float* __restrict__ valueById, std::uint32_t values, float4* __restrict__ out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const sim::Vec4 x = posMass[i];
  const std::uint32_t k = id[i];
  float v = vertexValue(rule, tag[i], k, vel[i], bin[i]);
  if (rule.colorBy == ColorBy::ForceError && v != kHiddenVertex) {
    // Beyond the measured ids: the unmeasured grey; a dust carrier keeps its dust.
    v = withColour(v, k < values ? valueById[k] : 0.0f);
  }
  out[i] = make_float4(x.x, x.y, x.z, v);
}

cudaGraphicsResource_t resourceOf(void* r) { return static_cast<cudaGraphicsResource_t>(r); }

}  // namespace

static_assert(sizeof(render::ParticleVertex) == sizeof(float4),
              "the kernel writes one float4 per ParticleVertex");

CudaGlBridge::~CudaGlBridge() {
  unregister();
  if (m_values != nullptr) (void)cudaFree(m_values);
}

void CudaGlBridge::setValues(const std::vector<float>& valueById) {
  if (valueById.size() > m_valueCapacity) {
    if (m_values != nullptr) BHVIZ_CUDA_CHECK(cudaFree(m_values));
    m_values = nullptr;
    m_valueCapacity = 0;
    BHVIZ_CUDA_CHECK(cudaMalloc(&m_values, valueById.size() * sizeof(float)));
    m_valueCapacity = valueById.size();
  }
  if (!valueById.empty()) {
    BHVIZ_CUDA_CHECK(cudaMemcpy(m_values, valueById.data(), valueById.size() * sizeof(float),
                                cudaMemcpyHostToDevice));
  }
  m_valueCount = valueById.size();
}

void CudaGlBridge::unregister() noexcept {
  if (m_resource != nullptr) {
    (void)cudaGraphicsUnregisterResource(resourceOf(m_resource));
    m_resource = nullptr;
  }
}

void CudaGlBridge::reg(const render::VertexBufferInfo& buffer) {
  unregister();
  cudaGraphicsResource_t resource = nullptr;
  const cudaError_t err =
      cudaGraphicsGLRegisterBuffer(&resource, buffer.name, cudaGraphicsRegisterFlagsWriteDiscard);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: clear it so later CUDA checks do not see it
    throw InteropUnavailable(std::string("cudaGraphicsGLRegisterBuffer failed: ") +
                             cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
  }
  m_resource = resource;
  m_name = buffer.name;
  m_generation = buffer.generation;
}

template <typename Launch>
void CudaGlBridge::mapped(const render::VertexBufferInfo& buffer, void* streamHandle,
                          std::size_t bytes, Launch&& launch) {
  const auto stream = static_cast<cudaStream_t>(streamHandle);
  if (m_resource == nullptr || buffer.name != m_name || buffer.generation != m_generation) {
    reg(buffer);
  }
  cudaGraphicsResource_t resource = resourceOf(m_resource);
  BHVIZ_CUDA_CHECK(cudaGraphicsMapResources(1, &resource, stream));
  void* pointer = nullptr;
  std::size_t size = 0;
  const cudaError_t got = cudaGraphicsResourceGetMappedPointer(&pointer, &size, resource);
  try {
    if (got == cudaSuccess && size >= bytes) launch(pointer);
  } catch (...) {
    (void)cudaGraphicsUnmapResources(1, &resource, stream);  // never left mapped
    throw;
  }
  const cudaError_t launched = cudaGetLastError();
  // Unmap whatever happened: a buffer left mapped cannot be drawn.
  BHVIZ_CUDA_CHECK(cudaGraphicsUnmapResources(1, &resource, stream));
  BHVIZ_CUDA_CHECK(got);
  if (size < bytes) throw std::logic_error("CudaGlBridge: the mapped buffer is smaller than asked");
  BHVIZ_CUDA_CHECK(launched);
}

void CudaGlBridge::write(const sim::DeviceArrays& p, const VertexRule& rule,
                         const render::VertexBufferInfo& buffer, bool byValue) {
  const auto* valueById = static_cast<const float*>(byValue ? m_values : nullptr);
  const std::size_t values = byValue ? m_valueCount : 0;
  if (p.n > buffer.capacity) throw std::logic_error("CudaGlBridge: the vertex buffer is too small");
  if (p.n == 0) {
    if (m_resource == nullptr || buffer.name != m_name || buffer.generation != m_generation) {
      reg(buffer);  // so that a refusal shows at once, not at the first particle
    }
    return;
  }
  mapped(buffer, p.stream, p.n * sizeof(float4), [&](void* out) {
    const auto n = static_cast<std::uint32_t>(p.n);
    writeVerticesKernel<<<sim::cuda::blocksFor(p.n), sim::cuda::kBlock, 0,
                          static_cast<cudaStream_t>(p.stream)>>>(
        n, rule, p.posMass, p.vel, p.tag, p.bin, p.id, valueById,
        static_cast<std::uint32_t>(values), static_cast<float4*>(out));
  });
}

void CudaGlBridge::writeBoxes(const sim::DeviceAccess& device, const sim::BoxQuery& query,
                              std::size_t n, const render::VertexBufferInfo& buffer) {
  if (n > buffer.capacity) throw std::logic_error("CudaGlBridge: the box buffer is too small");
  if (n == 0) return;
  static_assert(sizeof(sim::DrawBox) == sizeof(render::OverlayBox),
                "the backend writes one exported box per overlay box");
  mapped(buffer, device.particles().stream, n * sizeof(render::OverlayBox),
         [&](void* out) { device.writeBoxes(query, static_cast<sim::DrawBox*>(out)); });
}

}  // namespace bhviz::app
