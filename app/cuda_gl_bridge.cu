// The CUDA side of the CUDA–GL bridge: register, map, write, unmap. One thread per particle; the
// per-particle rule is vertexValue (app/vertex_rule.h), the same function the CPU path calls.
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "app/cuda_gl_bridge.h"
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
  float v = vertexValue(rule, tag[i], vel[i], bin[i]);
  if (rule.colorBy == ColorBy::ForceError && v != kHiddenVertex) {
    const std::uint32_t k = id[i];
    v = k < values ? valueById[k] : 0.0f;  // beyond the measured ids: the unmeasured grey
  }
  out[i] = make_float4(x.x, x.y, x.z, v);
}

/// An overlay box as the kernels write it: render::OverlayBox's layout without GLM.
struct BoxRecord {
  float centre[3];
  float halfSize[3];
  float colour[4];
};
static_assert(sizeof(BoxRecord) == sizeof(render::OverlayBox) &&
                  offsetof(render::OverlayBox, halfSize) == offsetof(BoxRecord, halfSize) &&
                  offsetof(render::OverlayBox, colour) == offsetof(BoxRecord, colour),
              "BoxRecord mirrors render::OverlayBox");

struct KernelColours {
  float4 rgba[sim::kMaxLevel + 1];
};

__device__ BoxRecord boxRecord(const sim::Box& b, float4 colour) {
  BoxRecord r;
  r.centre[0] = 0.5f * (b.lo.x + b.hi.x);
  r.centre[1] = 0.5f * (b.lo.y + b.hi.y);
  r.centre[2] = 0.5f * (b.lo.z + b.hi.z);
  r.halfSize[0] = 0.5f * (b.hi.x - b.lo.x);
  r.halfSize[1] = 0.5f * (b.hi.y - b.lo.y);
  r.halfSize[2] = 0.5f * (b.hi.z - b.lo.z);
  r.colour[0] = colour.x;
  r.colour[1] = colour.y;
  r.colour[2] = colour.z;
  r.colour[3] = colour.w;
  return r;
}

/// One thread per cell of [begin, begin + n): the cube of the cell, as treeCellBoxes.
__global__ void cellBoxesKernel(std::uint32_t begin, std::uint32_t n,
                                const std::uint32_t* __restrict__ first,
                                const std::uint8_t* __restrict__ level,
                                const sim::Vec4* __restrict__ posMass,
                                const sim::KeyFrame* __restrict__ frame, KernelColours byLevel,
                                BoxRecord* __restrict__ out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t c = begin + i;
  const sim::Vec4 x = posMass[first[c]];
  const sim::KeyFrame f = *frame;
  const int l = level[c];
  out[i] = boxRecord(sim::cellCube(sim::quantize({x.x, x.y, x.z}, f), l, f), byLevel.rgba[l]);
}

/// One thread per group: the box of its active particles, as groupBoxes (a group without
/// any, which the groups stage does not list, would get an invisible box).
__global__ void groupBoxesKernel(std::uint32_t n, const sim::Box* __restrict__ box, float4 colour,
                                 BoxRecord* __restrict__ out) {
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n) return;
  const sim::Box b = box[g];
  const bool empty = !(b.lo.x <= b.hi.x);
  out[g] = empty ? boxRecord(sim::Box{{0, 0, 0}, {0, 0, 0}}, make_float4(0, 0, 0, 0))
                 : boxRecord(b, colour);
}

LevelRange levelRange(const sim::cuda::DeviceTreeView& tree, const OverlayRequest& request) {
  return overlayLevels(request.minLevel, request.maxLevel,
                       static_cast<int>(tree.levelBegin.size()) - 1);
}

cudaGraphicsResource_t resourceOf(void* r) { return static_cast<cudaGraphicsResource_t>(r); }

}  // namespace

std::size_t overlayBoxCount(const sim::cuda::DeviceTreeView& tree, const OverlayRequest& request) {
  std::size_t n = 0;
  const LevelRange r = levelRange(tree, request);
  if (request.cells && r.first <= r.last) n += tree.levelBegin[r.last + 1] - tree.levelBegin[r.first];
  if (request.groups) n += tree.groups;
  return n;
}

void writeOverlayBoxes(const sim::cuda::DeviceView& p, const sim::cuda::DeviceTreeView& tree,
                       const OverlayRequest& request, const LevelColours& colours, render::OverlayBox* out) {
  auto* records = reinterpret_cast<BoxRecord*>(out);
  const LevelRange r = levelRange(tree, request);
  if (request.cells && r.first <= r.last) {
    KernelColours byLevel{};
    for (std::size_t l = 0; l < colours.size(); ++l) {
      const glm::vec4& c = colours[l];
      byLevel.rgba[l] = make_float4(c.r, c.g, c.b, c.a);
    }
    const std::uint32_t begin = tree.levelBegin[r.first];
    const std::uint32_t n = tree.levelBegin[r.last + 1] - begin;
    cellBoxesKernel<<<sim::cuda::blocksFor(n), sim::cuda::kBlock, 0, p.stream>>>(
        begin, n, tree.first, tree.level, p.posMass, tree.frame, byLevel, records);
    records += n;
  }
  if (request.groups && tree.groups > 0) {
    const float4 colour =
        make_float4(kGroupColour[0], kGroupColour[1], kGroupColour[2], kGroupOpacity);
    groupBoxesKernel<<<sim::cuda::blocksFor(tree.groups), sim::cuda::kBlock, 0, p.stream>>>(
        tree.groups, tree.groupBox, colour, records);
  }
}

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

std::vector<render::OverlayBox> overlayBoxesViaHost(
    const sim::cuda::DeviceView& p, const sim::cuda::DeviceTreeView& tree,
    const OverlayRequest& request, const LevelColours& colours,
    sim::cuda::DeviceBuffer<render::OverlayBox>& scratch) {
  const std::size_t n = overlayBoxCount(tree, request);
  std::vector<render::OverlayBox> boxes(n);
  if (n == 0) return boxes;
  scratch.reserve(n);
  writeOverlayBoxes(p, tree, request, colours, scratch.data());
  BHVIZ_CUDA_CHECK(cudaGetLastError());
  BHVIZ_CUDA_CHECK(cudaStreamSynchronize(p.stream));
  sim::cuda::copyToHost(boxes.data(), scratch.data(), n * sizeof(render::OverlayBox));
  return boxes;
}

template <typename Launch>
void CudaGlBridge::mapped(const render::VertexBufferInfo& buffer, sim::cuda::Stream stream,
                          std::size_t bytes, Launch&& launch) {
  if (m_resource == nullptr || buffer.name != m_name || buffer.generation != m_generation) {
    reg(buffer);
  }
  cudaGraphicsResource_t resource = resourceOf(m_resource);
  BHVIZ_CUDA_CHECK(cudaGraphicsMapResources(1, &resource, stream));
  void* pointer = nullptr;
  std::size_t size = 0;
  const cudaError_t got = cudaGraphicsResourceGetMappedPointer(&pointer, &size, resource);
  if (got == cudaSuccess && size >= bytes) launch(pointer);
  const cudaError_t launched = cudaGetLastError();
  // Unmap whatever happened: a buffer left mapped cannot be drawn.
  BHVIZ_CUDA_CHECK(cudaGraphicsUnmapResources(1, &resource, stream));
  BHVIZ_CUDA_CHECK(got);
  if (size < bytes) throw std::logic_error("CudaGlBridge: the mapped buffer is smaller than asked");
  BHVIZ_CUDA_CHECK(launched);
}

void CudaGlBridge::write(const sim::cuda::DeviceView& p, const VertexRule& rule,
                         const render::VertexBufferInfo& buffer, const float* valueById,
                         std::size_t values) {
  if (values > 0 && valueById == nullptr) throw std::logic_error("CudaGlBridge: no values");
  if (p.n > buffer.capacity) throw std::logic_error("CudaGlBridge: the vertex buffer is too small");
  if (p.n == 0) {
    if (m_resource == nullptr || buffer.name != m_name || buffer.generation != m_generation) {
      reg(buffer);  // so that a refusal shows at once, not at the first particle
    }
    return;
  }
  mapped(buffer, p.stream, p.n * sizeof(float4), [&](void* out) {
    const auto n = static_cast<std::uint32_t>(p.n);
    writeVerticesKernel<<<sim::cuda::blocksFor(p.n), sim::cuda::kBlock, 0, p.stream>>>(
        n, rule, p.posMass, p.vel, p.tag, p.bin, p.id, valueById,
        static_cast<std::uint32_t>(values), static_cast<float4*>(out));
  });
}

void CudaGlBridge::writeBoxes(const sim::cuda::DeviceView& p, const sim::cuda::DeviceTreeView& tree,
                              const OverlayRequest& request,
                              const LevelColours& colours, const render::VertexBufferInfo& buffer) {
  const std::size_t n = overlayBoxCount(tree, request);
  if (n > buffer.capacity) throw std::logic_error("CudaGlBridge: the box buffer is too small");
  if (n == 0) return;
  mapped(buffer, p.stream, n * sizeof(render::OverlayBox), [&](void* out) {
    writeOverlayBoxes(p, tree, request, colours, static_cast<render::OverlayBox*>(out));
  });
}

}  // namespace bhviz::app
