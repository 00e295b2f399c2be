#pragma once
// CUDA–OpenGL interop: a kernel writes the renderer's particle vertex buffer straight from a
// device backend's particle arrays, and the backend writes its exported overlay boxes straight
// into the renderer's box buffer (sim::DeviceAccess). Plain C++ header; cuda_gl_bridge.cu holds the
// CUDA and cuda_gl_interop.h. Built only with CUDA (BHVIZ_HAVE_CUDA); vertex_writer.cpp and
// overlay_writer.cpp are the places that decide whether to use it.
//
// The buffer is registered once per generation of its storage (render::VertexBufferInfo), and
// mapped, written and unmapped every frame: nothing stays mapped while GL draws.

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

  void* m_values = nullptr;  // device: float per particle id
  std::size_t m_valueCount = 0, m_valueCapacity = 0;
  void* m_resource = nullptr;  // cudaGraphicsResource_t
  std::uint32_t m_name = 0;
  std::uint64_t m_generation = 0;
};

}  // namespace bhviz::app
