#pragma once
// CUDA–OpenGL interop: a kernel writes the renderer's particle vertex buffer straight from a
// device backend's particle arrays, and the backend writes its exported overlay boxes straight
// into the renderer's box buffer (sim::DeviceAccess). Plain C++ header; cuda_gl_bridge.cu holds the
// CUDA and cuda_gl_interop.h. Built only with CUDA (BHVIZ_HAVE_CUDA); vertex_writer.cpp and
// overlay_writer.cpp are the places that decide whether to use it.
//
// Two ways to the vertex buffer:
// - shared memory (the default where the GL has GL_EXT_memory_object_fd on CUDA's device): the
//   bridge allocates exportable device memory (cuMemCreate), the GL imports it as the buffer's
//   storage, and each frame the kernel writes it with no map or unmap. The two APIs are ordered
//   on the host: writeShared waits for its kernel before returning (so before the GL draws), and
//   the caller waits for the GL's last draw (render::Renderer::waitForParticleReads) before the
//   next writeShared. On an H200 a map and unmap cost 0.37 ms a frame (docs/BENCHMARKS.md).
// - mapped: the buffer is registered once per generation of its storage
//   (render::VertexBufferInfo), and mapped, written and unmapped every frame: nothing stays
//   mapped while GL draws. The overlay's boxes always go this way.

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "app/core/vertex_rule.h"
#include "render/vertex.h"
#include "sim/backend.h"

namespace bhviz::app {

/// The interop cannot be used (registration refused: e.g. the GL runs on another GPU than
/// CUDA, as on hybrid laptops). what() is one line with CUDA's reason.
struct InteropUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Device memory the GL can import: a file descriptor for it (the caller passes it on to the GL,
/// which then owns it) and its size, a multiple of the allocation granularity.
struct ExportedMemory {
  int fd = -1;
  std::size_t bytes = 0;
};

class CudaGlBridge {
 public:
  CudaGlBridge() = default;
  ~CudaGlBridge();  ///< unregisters (the GL context must still be current)
  CudaGlBridge(const CudaGlBridge&) = delete;
  CudaGlBridge& operator=(const CudaGlBridge&) = delete;

  /// Writes one vertex per particle into `buffer` (capacity ≥ particles.n) on the particles'
  /// stream: map, kernel, unmap. Registers the buffer first when its generation changed.
  /// `byValue` (colouring by force error): a visible particle's value is values[id] of the last
  /// setValues (0, the unmeasured grey, beyond), as ParticleView::fill writes it.
  /// Throws InteropUnavailable when registering fails, std::runtime_error on other CUDA errors.
  void write(const sim::DeviceArrays& particles, const VertexRule& rule,
             const render::VertexBufferInfo& buffer, bool byValue = false);
  /// The shared vertex memory, at least `bytes` (reallocated when smaller: a renderer still
  /// drawing from the old memory keeps it alive through its import), exported again as a new
  /// descriptor for the GL to import. Throws InteropUnavailable where the driver cannot export
  /// device memory as a POSIX file descriptor (then use write()).
  ExportedMemory exportShared(std::size_t bytes);
  /// Lets go of the shared memory (a GL that imported it keeps it alive until it lets go too).
  void releaseShared() noexcept;
  /// Whether one of `uuids` (e.g. render::glDeviceUuids(): the GL's devices) is the current
  /// CUDA device's: the GL can then draw from memory exportShared exports.
  static bool hasCurrentDevice(const std::vector<std::array<std::uint8_t, 16>>& uuids);
  /// As write(), into the shared memory (exportShared, large enough for particles.n) on the
  /// particles' stream; returns when the kernel is done, so that the GL may draw the vertices.
  void writeShared(const sim::DeviceArrays& particles, const VertexRule& rule,
                   bool byValue = false);
  /// The per-id values of colouring by force error, copied to the device (blocking).
  void setValues(const std::vector<float>& valueById);
  /// Has the backend write the `n` boxes of `query` (its boxCount) into `buffer` (capacity ≥ n):
  /// map, the backend's kernels, unmap.
  void writeBoxes(const sim::DeviceAccess& device, const sim::BoxQuery& query, std::size_t n,
                  const render::VertexBufferInfo& buffer);

 private:
  /// Maps `buffer` (registering it first when its generation changed) and runs `launch` on the
  /// mapped pointer; unmaps whatever happens. Throws when the mapping is smaller than `bytes`.
  template <typename Launch>
  void mapped(const render::VertexBufferInfo& buffer, void* stream, std::size_t bytes,
              Launch&& launch);
  void reg(const render::VertexBufferInfo& buffer);
  void unregister() noexcept;
  /// The vertex kernel into `out` on the particles' stream.
  void launchWrite(const sim::DeviceArrays& particles, const VertexRule& rule, bool byValue,
                   void* out) const;

  void* m_values = nullptr;  // device: float per particle id
  std::size_t m_valueCount = 0, m_valueCapacity = 0;
  void* m_resource = nullptr;  // cudaGraphicsResource_t
  std::uint32_t m_name = 0;
  std::uint64_t m_generation = 0;
  // The shared vertex memory: a physical allocation and its mapping into the address space.
  unsigned long long m_sharedHandle = 0;  // CUmemGenericAllocationHandle
  void* m_shared = nullptr;               // its device address
  std::size_t m_sharedBytes = 0;
};

}  // namespace bhviz::app
