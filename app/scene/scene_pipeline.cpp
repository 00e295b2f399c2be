#include "app/scene/scene_pipeline.h"

namespace bhviz::app {

namespace {
constexpr float kFramePadding = 1.3f;  // the framed sphere is this much larger than Framing::radius
constexpr float kDefaultPitch = 0.55f;  // ~30° above the disk plane [rad]
constexpr float kDefaultYaw = -0.6f;    // [rad]
constexpr float kFieldOfView = 0.61f;   // 35°: less perspective stretch than 45° [rad]
}  // namespace

render::RenderParams sceneRenderParams() {
  render::RenderParams params;
  params.tone.exposure = 1.0f;
  params.tone.bloomStrength = 0.35f;
  params.tone.bloomThreshold = 0.6f;
  params.background = glm::vec3(0.0f, 0.0f, 0.01f);
  return params;
}

void applyLookOptions(render::RenderParams& look, const FrameOptions& options) {
  look.extinction.enabled = options.dust > 0.0f;
  if (look.extinction.enabled) look.extinction.strength = options.dust;
  look.depthOfField.enabled = options.dofAperture > 0.0f;
  if (look.depthOfField.enabled) look.depthOfField.aperture = options.dofAperture;
  look.depthOfField.focus = options.dofFocus;
}

void aimCamera(render::Camera& camera, const Framing& framing, float aspect) {
  camera.pitch = kDefaultPitch;
  camera.yaw = kDefaultYaw;
  camera.fovY = kFieldOfView;
  camera.autoRotateAngle = 0.0f;
  camera.frameSphere(framing.centre, kFramePadding * framing.radius, aspect);
}

ScenePipeline::ScenePipeline(const ViewSettings& view) : m_view(view), m_look(sceneRenderParams()) {
  m_renderer.setPalette(m_view.palette());
}

void ScenePipeline::frame(const sim::Particles& initial, float aspect) {
  m_framing = frameVisible(initial, m_view.settings());
  m_view.calibrate(initial);
  aimCamera(m_camera, m_framing, aspect);
  m_framedDistance = m_camera.distance;
  m_look.particles = particleStyleFor(m_framing.visible, m_framing.radius);
}

void ScenePipeline::setView(const ViewSettings& view, const sim::Particles& initial) {
  std::shared_ptr<const std::vector<float>> errors = m_view.errors();
  m_view = ParticleView(view);
  m_view.setErrors(std::move(errors));
  m_view.calibrate(initial);
  m_renderer.setPalette(m_view.palette());
}

std::string ScenePipeline::writeParticles(const sim::Simulation& sim) {
  m_view.setDust(m_look.extinction.enabled);
  return m_writer.write(sim, m_view, m_renderer);
}

void ScenePipeline::writeParticles(const sim::Particles& p) {
  m_view.setDust(m_look.extinction.enabled);
  m_view.fill(p, m_vertices);
  m_renderer.setParticles(m_vertices.data(), m_vertices.size());
}

std::string ScenePipeline::writeOverlay(const sim::Simulation& sim, const OverlayRequest& request,
                                        const std::vector<render::OverlayBox>& over) {
  if (over.empty()) {
    const std::string line = m_overlay.write(sim, request, m_renderer);
    m_hostBoxes = m_overlay.hostBoxes();
    return line;
  }
  std::vector<render::OverlayBox> boxes = overlayBoxes(sim.backend(), request);
  boxes.insert(boxes.end(), over.begin(), over.end());
  setBoxes(boxes);
  return {};
}

void ScenePipeline::setBoxes(const std::vector<render::OverlayBox>& boxes) {
  m_hostBoxes = boxes;
  m_renderer.setBoxes(boxes.data(), boxes.size());
}

void ScenePipeline::setLines(const std::vector<render::OverlayLine>& lines) {
  m_renderer.setLines(lines.data(), lines.size());
}

void ScenePipeline::render(const render::RenderTarget& target) {
  if (target.width > 0 && target.height > 0) m_renderer.render(m_camera, m_look, target);
}

}  // namespace bhviz::app
