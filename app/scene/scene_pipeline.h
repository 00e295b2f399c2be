#pragma once
// One scene from a simulation to pixels, the same for the window, the headless pictures and
// the frame benchmark: the particle view (colours), the vertex and overlay writers (CUDA–GL
// interop where the backend keeps its state on a device), the renderer, the camera and the
// look. Needs a current GL context (a window's or a HeadlessGlContext).

#include <memory>
#include <string>
#include <vector>

#include "app/scene/overlay_view.h"
#include "app/scene/overlay_writer.h"
#include "app/scene/particle_view.h"
#include "app/scene/vertex_writer.h"
#include "render/camera.h"
#include "render/renderer.h"
#include "sim/simulation.h"

namespace bhviz::app {

/// The look of every picture, headless or in the window: exposure, bloom, background.
render::RenderParams sceneRenderParams();
/// The command line's render options (--dust, --dof, --focus) onto a look: the window's first
/// look and the headless pictures'.
void applyLookOptions(render::RenderParams& look, const FrameOptions& options);
/// The default view of a scene: 30° above the disk plane, the framed sphere filling the view.
void aimCamera(render::Camera& camera, const Framing& framing, float aspect);

class ScenePipeline {
 public:
  explicit ScenePipeline(const ViewSettings& view);

  /// Aims the camera at the visible particles of `initial`, fixes the speed scale and the
  /// sprite style (the look's particles) for them.
  void frame(const sim::Particles& initial, float aspect);
  /// A new colouring or visibility: its palette, calibrated on `initial`; the errors are kept.
  void setView(const ViewSettings& view, const sim::Particles& initial);
  /// Relative force errors by id for ColorBy::ForceError (ParticleView::setErrors).
  void setErrors(std::shared_ptr<const std::vector<float>> errorById) {
    m_view.setErrors(std::move(errorById));
  }

  /// The simulation's particles into the vertex buffer, without a copy of the state where the
  /// backend allows (interop on a device); a share of the disk carries dust when the look's
  /// extinction is on (the one switch for dust). Returns a line to show once, else empty.
  std::string writeParticles(const sim::Simulation& sim);
  /// Particles from the host (a copy of a state, a test's scene).
  void writeParticles(const sim::Particles& p);
  /// The tree overlay of `request` (written on the device where the backend keeps its tree),
  /// with `over` (a pick's walk) drawn over it: then both are made on the host. Returns a line
  /// to show once, else empty.
  std::string writeOverlay(const sim::Simulation& sim, const OverlayRequest& request,
                           const std::vector<render::OverlayBox>& over = {});
  void setBoxes(const std::vector<render::OverlayBox>& boxes);
  /// Lines drawn over the boxes (the merger builder's preview); none = no lines.
  void setLines(const std::vector<render::OverlayLine>& lines);

  /// Draws the particles and boxes written last into `target` with the camera and the look.
  void render(const render::RenderTarget& target);

  render::Camera& camera() { return m_camera; }
  const render::Camera& camera() const { return m_camera; }
  render::RenderParams& look() { return m_look; }
  render::Renderer& renderer() { return m_renderer; }
  const ParticleView& view() const { return m_view; }
  const Framing& framing() const { return m_framing; }
  /// The camera distance frame() chose: a scripted camera's distances are relative to it.
  float framedDistance() const { return m_framedDistance; }
  /// The boxes last made on the host (empty when the overlay was written on the device).
  const std::vector<render::OverlayBox>& hostBoxes() const { return m_hostBoxes; }
  std::size_t boxCount() const { return m_renderer.boxCount(); }
  /// How the last vertices were written (VertexWriter::path: "CUDA-GL shared memory",
  /// "CUDA-GL interop", "host upload", …) and the boxes (OverlayWriter::path).
  std::string vertexPath() const { return m_writer.path(); }
  const char* overlayPath() const { return m_overlay.path(); }

 private:
  ParticleView m_view;
  render::Renderer m_renderer;
  render::Camera m_camera;
  render::RenderParams m_look;
  Framing m_framing;
  float m_framedDistance = 1.0f;
  std::vector<render::ParticleVertex> m_vertices;
  std::vector<render::OverlayBox> m_hostBoxes;
  VertexWriter m_writer;    // after m_renderer: unregisters the buffer before it is deleted
  OverlayWriter m_overlay;  // the same
};

}  // namespace bhviz::app
