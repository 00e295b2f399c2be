#pragma once
// The tree overlay of the simulation's last force evaluation → the renderer's box buffer. The
// backend exports the boxes (sim::Backend::boxes, sim/common/draw.h): on the host, or, where it
// keeps its tree on a device, written there straight into the GL buffer through CUDA–GL
// interop (cuda_gl_bridge.h), or copied to the host when interop is not available. Every path
// gives the same boxes in the same order.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "app/scene/overlay_view.h"
#include "render/renderer.h"
#include "sim/simulation.h"

namespace bhviz::app {

class OverlayWriter {
 public:
  OverlayWriter();
  ~OverlayWriter();  ///< needs the GL context still current (it unregisters the buffer)
  OverlayWriter(const OverlayWriter&) = delete;
  OverlayWriter& operator=(const OverlayWriter&) = delete;

  /// Replaces the renderer's overlay boxes with those of `request` (none when it asks for
  /// nothing or no tree has been built yet). Returns a line to show the user once (interop
  /// refused, so copying through the host instead), else empty.
  std::string write(const sim::Simulation& sim, const OverlayRequest& request,
                    render::Renderer& renderer);

  /// The boxes the last write made on the host (a host backend's); empty when they were made
  /// on the device, so that a caller can draw more boxes over them.
  const std::vector<render::OverlayBox>& hostBoxes() const { return m_hostBoxes; }

  /// "host", "GPU, CUDA-GL interop" or "GPU, copied to the host": how the last boxes were made.
  const char* path() const { return m_path; }

 private:
  struct Device;
  std::unique_ptr<Device> m_device;  // null without CUDA
  const char* m_path = "host";
  std::vector<render::OverlayBox> m_hostBoxes;
};

}  // namespace bhviz::app
