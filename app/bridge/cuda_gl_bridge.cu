// The CUDA side of the CUDA–GL bridge: shared memory exported to the GL, or register, map,
// write, unmap. One thread per particle; the per-particle rule is vertexValue
// (app/vertex_rule.h), the same function the CPU path calls.
#include <cuda.h>  // the driver API's types only: its calls come from cudaGetDriverEntryPoint...
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
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

/// The driver API's virtual memory calls, looked up in the driver at run time: the binary links
/// no libcuda, so that it starts on machines without the NVIDIA driver.
struct Driver {
  decltype(&::cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&::cuMemCreate) create = nullptr;
  decltype(&::cuMemExportToShareableHandle) exportHandle = nullptr;
  decltype(&::cuMemAddressReserve) reserve = nullptr;
  decltype(&::cuMemMap) map = nullptr;
  decltype(&::cuMemSetAccess) setAccess = nullptr;
  decltype(&::cuMemUnmap) unmap = nullptr;
  decltype(&::cuMemAddressFree) addressFree = nullptr;
  decltype(&::cuMemRelease) release = nullptr;
  bool complete = false;
};

template <typename F>
bool lookUp(F& f, const char* symbol) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  constexpr unsigned int kVersion = 12000;  // the calls as CUDA 12.0 defines them
  if (cudaGetDriverEntryPointByVersion(symbol, &p, kVersion, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  f = reinterpret_cast<F>(p);
  return true;
}

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    r.complete = lookUp(r.granularity, "cuMemGetAllocationGranularity") &&
                 lookUp(r.create, "cuMemCreate") &&
                 lookUp(r.exportHandle, "cuMemExportToShareableHandle") &&
                 lookUp(r.reserve, "cuMemAddressReserve") && lookUp(r.map, "cuMemMap") &&
                 lookUp(r.setAccess, "cuMemSetAccess") && lookUp(r.unmap, "cuMemUnmap") &&
                 lookUp(r.addressFree, "cuMemAddressFree") && lookUp(r.release, "cuMemRelease");
    return r;
  }();
  return d;
}

/// Throws InteropUnavailable naming `what` when a driver call failed.
void expect(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    throw InteropUnavailable(std::string(what) + " failed (CUresult " + std::to_string(int(r)) +
                             ")");
  }
}

}  // namespace

static_assert(sizeof(render::ParticleVertex) == sizeof(float4),
              "the kernel writes one float4 per ParticleVertex");

CudaGlBridge::~CudaGlBridge() {
  unregister();
  releaseShared();
  if (m_values != nullptr) (void)cudaFree(m_values);
}

void CudaGlBridge::releaseShared() noexcept {
  if (m_shared == nullptr) return;  // (every writeShared has finished: it returns only then)
  const Driver& d = driver();
  // A GL that imported the memory holds its own reference: the memory lives on until it lets go.
  const auto address = reinterpret_cast<CUdeviceptr>(m_shared);
  (void)d.unmap(address, m_sharedBytes);
  (void)d.addressFree(address, m_sharedBytes);
  (void)d.release(static_cast<CUmemGenericAllocationHandle>(m_sharedHandle));
  m_shared = nullptr;
  m_sharedHandle = 0;
  m_sharedBytes = 0;
}

bool CudaGlBridge::hasCurrentDevice(const std::vector<std::array<std::uint8_t, 16>>& uuids) {
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  static_assert(sizeof(prop.uuid.bytes) == 16, "a CUDA device UUID is 16 bytes");
  return std::any_of(uuids.begin(), uuids.end(), [&](const std::array<std::uint8_t, 16>& u) {
    return std::memcmp(prop.uuid.bytes, u.data(), u.size()) == 0;
  });
}

ExportedMemory CudaGlBridge::exportShared(std::size_t bytes) {
  const Driver& d = driver();
  if (!d.complete) throw InteropUnavailable("the driver has no virtual memory calls");
  int device = 0;
  BHVIZ_CUDA_CHECK(cudaGetDevice(&device));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  if (m_shared == nullptr || m_sharedBytes < bytes) {
    releaseShared();
    std::size_t granule = 0;
    expect(d.granularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
           "cuMemGetAllocationGranularity");
    const std::size_t size = (std::max<std::size_t>(bytes, 1) + granule - 1) / granule * granule;
    CUmemGenericAllocationHandle handle = 0;
    expect(d.create(&handle, size, &prop, 0), "cuMemCreate (exportable as a file descriptor)");
    CUdeviceptr address = 0;
    CUresult r = d.reserve(&address, size, 0, 0, 0);
    if (r == CUDA_SUCCESS) {
      r = d.map(address, size, 0, handle, 0);
      if (r != CUDA_SUCCESS) (void)d.addressFree(address, size);
    }
    if (r != CUDA_SUCCESS) (void)d.release(handle);
    expect(r, "reserving and mapping the shared vertex memory");
    m_sharedHandle = handle;
    m_shared = reinterpret_cast<void*>(address);
    m_sharedBytes = size;
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    r = d.setAccess(address, size, &access, 1);
    if (r != CUDA_SUCCESS) releaseShared();
    expect(r, "cuMemSetAccess");
  }
  int fd = -1;
  expect(d.exportHandle(&fd, static_cast<CUmemGenericAllocationHandle>(m_sharedHandle),
                        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
         "cuMemExportToShareableHandle");
  return {fd, m_sharedBytes};
}

void CudaGlBridge::launchWrite(const sim::DeviceArrays& p, const VertexRule& rule, bool byValue,
                               void* out) const {
  const auto* valueById = static_cast<const float*>(byValue ? m_values : nullptr);
  const std::size_t values = byValue ? m_valueCount : 0;
  writeVerticesKernel<<<sim::cuda::blocksFor(p.n), sim::cuda::kBlock, 0,
                        static_cast<cudaStream_t>(p.stream)>>>(
      static_cast<std::uint32_t>(p.n), rule, p.posMass, p.vel, p.tag, p.bin, p.id, valueById,
      static_cast<std::uint32_t>(values), static_cast<float4*>(out));
}

void CudaGlBridge::writeShared(const sim::DeviceArrays& p, const VertexRule& rule, bool byValue) {
  if (p.n * sizeof(float4) > m_sharedBytes) {
    throw std::logic_error("CudaGlBridge: the shared vertex memory is too small");
  }
  if (p.n == 0) return;
  launchWrite(p, rule, byValue, m_shared);
  BHVIZ_CUDA_CHECK(cudaGetLastError());
  BHVIZ_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(p.stream)));  // GL draws next
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
  if (p.n > buffer.capacity) throw std::logic_error("CudaGlBridge: the vertex buffer is too small");
  if (p.n == 0) {
    if (m_resource == nullptr || buffer.name != m_name || buffer.generation != m_generation) {
      reg(buffer);  // so that a refusal shows at once, not at the first particle
    }
    return;
  }
  mapped(buffer, p.stream, p.n * sizeof(float4),
         [&](void* out) { launchWrite(p, rule, byValue, out); });
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
