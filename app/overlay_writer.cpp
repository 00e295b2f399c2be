#include "app/overlay_writer.h"

#include <vector>

#include "sim/cpu/cpu_backend.h"
#if BHVIZ_HAVE_CUDA
#include "app/cuda_gl_bridge.h"
#endif

namespace bhviz::app {

#if BHVIZ_HAVE_CUDA
struct OverlayWriter::Device {
  CudaGlBridge bridge;
  bool interop = true;  // false once registering the box buffer was refused
  sim::cuda::DeviceBuffer<render::OverlayBox> scratch;  // the boxes when interop is refused

  /// The device boxes through the host: written into scratch, copied back, uploaded.
  void viaHost(const sim::cuda::DeviceView& p, const sim::cuda::DeviceTreeView& tree,
               const OverlayRequest& request, const LevelColours& colours,
               render::Renderer& renderer) {
    const std::vector<render::OverlayBox> boxes =
        overlayBoxesViaHost(p, tree, request, colours, scratch);
    renderer.setBoxes(boxes.data(), boxes.size());
  }
};
#else
struct OverlayWriter::Device {};
#endif

OverlayWriter::OverlayWriter() : m_device(std::make_unique<Device>()) {}
OverlayWriter::~OverlayWriter() = default;

std::string OverlayWriter::write(const sim::Simulation& sim, const OverlayRequest& request,
                                 render::Renderer& renderer) {
  m_path = "host";
  m_hostBoxes.clear();
  if (!request.any()) {
    renderer.setBoxes(nullptr, 0);
    return {};
  }
  if (const auto* cpu = dynamic_cast<const sim::CpuBackend*>(&sim.backend())) {
    m_hostBoxes = overlayBoxes(*cpu, request);
    renderer.setBoxes(m_hostBoxes.data(), m_hostBoxes.size());
    return {};
  }
#if BHVIZ_HAVE_CUDA
  const auto particles = sim::cuda::deviceView(sim.backend());
  const auto tree = sim::cuda::deviceTreeView(sim.backend());
  if (!particles || !tree) {
    renderer.setBoxes(nullptr, 0);
    return {};
  }
  const LevelColours colours = levelColours(overlayLevels(
      request.minLevel, request.maxLevel, static_cast<int>(tree->levelBegin.size()) - 1));
  if (m_device->interop) {
    const std::size_t n = overlayBoxCount(*tree, request);
    renderer.reserveBoxes(n);
    try {
      m_device->bridge.writeBoxes(*particles, *tree, request, colours, renderer.boxBuffer());
      renderer.setBoxCount(n);
      m_path = "GPU, CUDA-GL interop";
      return {};
    } catch (const InteropUnavailable& e) {
      m_device->interop = false;
      m_device->viaHost(*particles, *tree, request, colours, renderer);
      m_path = "GPU, copied to the host";
      return std::string("bhviz: CUDA-GL interop is not available for the overlay (") + e.what() +
             "); copying its boxes through the host instead";
    }
  }
  m_device->viaHost(*particles, *tree, request, colours, renderer);
  m_path = "GPU, copied to the host";
  return {};
#else
  renderer.setBoxes(nullptr, 0);
  return {};
#endif
}

}  // namespace bhviz::app
