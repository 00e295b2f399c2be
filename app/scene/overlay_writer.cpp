#include "app/scene/overlay_writer.h"

#include <vector>

#if BHVIZ_HAVE_CUDA
#include "app/bridge/cuda_gl_bridge.h"
#endif

namespace bhviz::app {

#if BHVIZ_HAVE_CUDA
struct OverlayWriter::Device {
  CudaGlBridge bridge;
  bool interop = true;  // false once registering the box buffer was refused
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
  const sim::Backend& backend = sim.backend();
  std::string line;
#if BHVIZ_HAVE_CUDA
  // Where the backend keeps its tree on the device, the boxes are written there, into the
  // renderer's buffer through interop.
  const sim::DeviceAccess* device = backend.deviceAccess();
  if (device != nullptr && m_device->interop) {
    const sim::BoxQuery query = boxQuery(request, backend.treeCensus().levels);
    const std::size_t n = backend.boxCount(query);
    renderer.reserveBoxes(n);
    try {
      m_device->bridge.writeBoxes(*device, query, n, renderer.boxBuffer());
      renderer.setBoxCount(n);
      m_path = "GPU, CUDA-GL interop";
      return {};
    } catch (const InteropUnavailable& e) {
      m_device->interop = false;
      line = std::string("bhviz: CUDA-GL interop is not available for the overlay (") + e.what() +
             "); copying its boxes through the host instead";
    }
  }
#endif
  // Made on the host, or copied there from the device.
  std::vector<render::OverlayBox> boxes = overlayBoxes(backend, request);
  renderer.setBoxes(boxes.data(), boxes.size());
  if (backend.traits().onDevice) {
    m_path = "GPU, copied to the host";
  } else {
    m_hostBoxes = std::move(boxes);
  }
  return line;
}

}  // namespace bhviz::app
