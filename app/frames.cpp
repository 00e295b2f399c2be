#include "app/frames.h"

#include <cstdio>
#include <iostream>

#include "app/output.h"
#include "app/overlay_view.h"
#include "app/scenario_camera.h"
#include "sim/cpu/cpu_backend.h"

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

void aimCamera(render::Camera& camera, const Framing& framing, float aspect) {
  camera.pitch = kDefaultPitch;
  camera.yaw = kDefaultYaw;
  camera.fovY = kFieldOfView;
  camera.autoRotateAngle = 0.0f;
  camera.frameSphere(framing.centre, kFramePadding * framing.radius, aspect);
}

SceneRenderer::SceneRenderer(int width, int height, const ViewSettings& view)
    : m_view(view), m_target(width, height), m_params(sceneRenderParams()) {
  m_renderer.setPalette(m_view.palette());
}

void SceneRenderer::frame(const sim::Particles& initial) {
  m_framing = frameVisible(initial, m_view.settings());
  m_view.calibrate(initial);
  const render::RenderTarget t = m_target.target();
  aimCamera(m_camera, m_framing, static_cast<float>(t.width) / static_cast<float>(t.height));
  m_framedDistance = m_camera.distance;
  m_params.particles = particleStyleFor(m_framing.visible, m_framing.radius);
}

void SceneRenderer::setBoxes(const std::vector<render::OverlayBox>& boxes) {
  m_renderer.setBoxes(boxes.data(), boxes.size());
}

render::Image SceneRenderer::render(const sim::Particles& p) {
  m_view.fill(p, m_vertices);
  m_renderer.setParticles(m_vertices.data(), m_vertices.size());
  m_renderer.render(m_camera, m_params, m_target.target());
  return m_target.read();
}

render::Image SceneRenderer::render(const sim::Simulation& sim) {
  const std::string notice = m_writer.write(sim, m_view, m_renderer);
  if (!notice.empty() && !m_writerNoted) {
    std::cerr << notice << '\n';
    m_writerNoted = true;
  }
  m_renderer.render(m_camera, m_params, m_target.target());
  return m_target.read();
}

FrameRecorder::FrameRecorder(const FrameOptions& options, int maxBinDepth)
    : m_options(options), m_context(HeadlessGlContext::create()) {
  ViewSettings view;
  view.colorBy = options.colorBy;
  view.visible[static_cast<std::size_t>(sim::Component::Halo)] = options.showHalo;
  view.maxBinDepth = maxBinDepth;
  m_scene = std::make_unique<SceneRenderer>(options.width, options.height, view);
}

FrameRecorder::~FrameRecorder() { m_scene.reset(); }  // GL objects go before the context

std::string FrameRecorder::description() const {
  std::string s = "bhviz: pictures " + std::to_string(m_options.width) + "x" +
                  std::to_string(m_options.height) + ", colour by " +
                  toString(m_options.colorBy);
  if (!m_options.framesDir.empty()) {
    s += ", frames in " + m_options.framesDir + " every " + std::to_string(m_options.every) +
         (m_options.every == 1 ? " step" : " steps");
  }
  if (!m_options.screenshotPath.empty()) s += ", screenshot " + m_options.screenshotPath;
  return s + "; " + m_context->description();
}

std::string FrameRecorder::frameName(int index) {
  char name[32];
  std::snprintf(name, sizeof name, "frame_%06d.png", index);
  return name;
}

render::Image FrameRecorder::renderState(const sim::Simulation& sim) {
  render::Camera& camera = m_scene->camera();
  render::applyCameraPath(camera, m_script, static_cast<float>(sim.time()),
                          m_scene->framedDistance());
  camera.autoRotateSpeed = m_script.autoRotate;
  camera.autoRotateAngle = 0.0f;
  camera.advance(kHeadlessFrameSeconds * static_cast<float>(m_written));
  if (m_options.overlay != OverlayKind::None) {
    const auto* cpu = dynamic_cast<const sim::CpuBackend*>(&sim.backend());
    if (cpu == nullptr) {
      if (!m_overlayNoted) {
        std::cerr << "bhviz: the " << toString(m_options.overlay)
                  << " overlay needs the CPU backend's tree (--backend cpu); drawing none\n";
        m_overlayNoted = true;
      }
    } else if (m_options.overlay == OverlayKind::Tree) {
      m_scene->setBoxes(treeCellBoxes(cpu->tree(), cpu->particles(), m_options.overlayMinLevel,
                                      m_options.overlayMaxLevel));
    } else {
      m_scene->setBoxes(groupBoxes(cpu->groups()));
    }
  }
  return m_scene->render(sim);
}

void FrameRecorder::write(const std::filesystem::path& path, const render::Image& image) const {
  const std::vector<std::uint8_t> png = render::encodePng(image);
  writeFileAtomically(path, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  });
}

void FrameRecorder::start(const sim::Simulation& sim) {
  m_scene->frame(sim.particles());
  if (m_options.framesDir.empty()) return;
  write(std::filesystem::path(m_options.framesDir) / frameName(m_written++), renderState(sim));
}

void FrameRecorder::afterStep(const sim::Simulation& sim, int step) {
  if (m_options.framesDir.empty() || step % m_options.every != 0) return;
  write(std::filesystem::path(m_options.framesDir) / frameName(m_written++), renderState(sim));
}

void FrameRecorder::finish(const sim::Simulation& sim) {
  if (m_options.screenshotPath.empty()) return;
  write(m_options.screenshotPath, renderState(sim));
}

}  // namespace bhviz::app
