#pragma once
// CUDA–OpenGL interop: kernels write the renderer's particle vertex buffer and its overlay boxes
// straight from the CUDA backend's device arrays. Plain C++ header; cuda_gl_bridge.cu holds the
// CUDA and cuda_gl_interop.h. Built only with CUDA (BHVIZ_HAVE_CUDA); vertex_writer.cpp and
// overlay_writer.cpp are the places that decide whether to use it.
//
// The buffer is registered once per generation of its storage (render::VertexBufferInfo), and
// mapped, written and unmapped every frame: nothing stays mapped while GL draws.

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "app/overlay_view.h"
#include "app/vertex_rule.h"
#include "render/vertex.h"
#include "sim/cuda/cuda_backend.h"
#include "sim/cuda/device_buffer.h"

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
  /// Colouring by force error, a visible particle's value is valueById[id] (device memory,
  /// `values` of them; 0, the unmeasured grey, beyond), as ParticleView::fill writes it.
  /// Throws InteropUnavailable when registering fails, std::runtime_error on other CUDA errors.
  void write(const sim::cuda::DeviceView& particles, const VertexRule& rule,
             const render::VertexBufferInfo& buffer, const float* valueById = nullptr,
             std::size_t values = 0);
  /// Writes the overlay boxes of `request` (overlayBoxCount of them, capacity ≥ that) from the
  /// backend's tree and groups into `buffer`, as writeOverlayBoxes does.
  void writeBoxes(const sim::cuda::DeviceView& particles, const sim::cuda::DeviceTreeView& tree,
                  const OverlayRequest& request, const LevelColours& colours, const render::VertexBufferInfo& buffer);

 private:
  /// Maps `buffer` (registering it first when its generation changed) and runs `launch` on the
  /// mapped pointer; unmaps whatever happens. Throws when the mapping is smaller than `bytes`.
  template <typename Launch>
  void mapped(const render::VertexBufferInfo& buffer, sim::cuda::Stream stream,
              std::size_t bytes, Launch&& launch);
  void reg(const render::VertexBufferInfo& buffer);
  void unregister() noexcept;

  void* m_resource = nullptr;  // cudaGraphicsResource_t
  std::uint32_t m_name = 0;
  std::uint64_t m_generation = 0;
};

/// The number of boxes `request` draws of `tree`: its cells of the level range, its groups.
std::size_t overlayBoxCount(const sim::cuda::DeviceTreeView& tree, const OverlayRequest& request);

/// Writes those boxes into device memory `out` (room for overlayBoxCount) on the particles'
/// stream, exactly as treeCellBoxes and groupBoxes do on the host: cells first, level by level,
/// then the groups. Used through CudaGlBridge::writeBoxes, or into a scratch buffer that is
/// copied to the host when interop is not available. Launches only: the caller checks
/// cudaGetLastError (after unmapping).
void writeOverlayBoxes(const sim::cuda::DeviceView& particles, const sim::cuda::DeviceTreeView& tree,
                       const OverlayRequest& request, const LevelColours& colours, render::OverlayBox* out);

/// The same boxes written into `scratch` and copied to the host (blocking): the overlay when
/// interop is refused, and the tests' view of what the kernels write.
std::vector<render::OverlayBox> overlayBoxesViaHost(
    const sim::cuda::DeviceView& particles, const sim::cuda::DeviceTreeView& tree,
    const OverlayRequest& request, const LevelColours& colours,
    sim::cuda::DeviceBuffer<render::OverlayBox>& scratch);

}  // namespace bhviz::app
