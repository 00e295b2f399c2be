#pragma once
// CUDA–OpenGL interop: a kernel writes the renderer's particle vertex buffer straight from the
// CUDA backend's device arrays. Plain C++ header; cuda_gl_bridge.cu holds the CUDA and
// cuda_gl_interop.h. Built only with CUDA (BHVIZ_HAVE_CUDA); vertex_writer.cpp is the one
// place that decides whether to use it.
//
// The buffer is registered once per generation of its storage (render::VertexBufferInfo), and
// mapped, written and unmapped every frame: nothing stays mapped while GL draws.

#include <cstdint>
#include <stdexcept>

#include "app/vertex_rule.h"
#include "render/vertex.h"
#include "sim/cuda/cuda_backend.h"

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
  /// Throws InteropUnavailable when registering fails, std::runtime_error on other CUDA errors.
  void write(const sim::cuda::DeviceView& particles, const VertexRule& rule,
             const render::VertexBufferInfo& buffer);

 private:
  void reg(const render::VertexBufferInfo& buffer);
  void unregister() noexcept;

  void* m_resource = nullptr;  // cudaGraphicsResource_t
  std::uint32_t m_name = 0;
  std::uint64_t m_generation = 0;
};

}  // namespace bhviz::app
