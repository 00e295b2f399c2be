#include "app/scene/frames.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "app/core/output.h"
#include "app/scene/overlay_view.h"
#include "app/scene/scenario_camera.h"
#include "app/scene/walk_view.h"

namespace bhviz::app {

SceneRenderer::SceneRenderer(int width, int height, const ViewSettings& view)
    : m_scene(view), m_target(width, height) {}

void SceneRenderer::frame(const sim::Particles& initial) {
  const render::RenderTarget t = m_target.target();
  m_scene.frame(initial, static_cast<float>(t.width) / static_cast<float>(t.height));
}

render::Image SceneRenderer::render(const sim::Particles& p) {
  m_scene.writeParticles(p);
  m_scene.render(m_target.target());
  return m_target.read();
}

render::Image SceneRenderer::render(const sim::Simulation& sim) {
  const std::string notice = m_scene.writeParticles(sim);
  if (!notice.empty() && !m_writerNoted) {
    std::cerr << notice << '\n';
    m_writerNoted = true;
  }
  m_scene.render(m_target.target());
  return m_target.read();
}

void writePngAtomically(const std::filesystem::path& path, const render::Image& image) {
  const std::vector<std::uint8_t> png = render::encodePng(image);
  writeFileAtomically(path, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  });
}

FrameRecorder::FrameRecorder(const FrameOptions& options, int maxBinDepth)
    : m_options(options), m_context(HeadlessGlContext::create()) {
  ViewSettings view;
  view.colorBy = options.colorBy;
  view.visible[static_cast<std::size_t>(sim::Component::Halo)] = options.showHalo;
  view.maxBinDepth = maxBinDepth;
  m_scene = std::make_unique<SceneRenderer>(options.width, options.height, view);
  applyLookOptions(m_scene->params(), options);
  // ffmpeg before any physics too: a missing encoder should cost nothing.
  if (!options.videoPath.empty()) {
    m_video = std::make_unique<VideoWriter>(options.ffmpeg, options.videoPath, options.width,
                                            options.height);
  }
}

FrameRecorder::~FrameRecorder() { m_scene.reset(); }  // GL objects go before the context

std::string FrameRecorder::description() const {
  std::string s = "bhviz: pictures " + std::to_string(m_options.width) + "x" +
                  std::to_string(m_options.height) + ", colour by " + toString(m_options.colorBy);
  if (m_options.dust > 0.0f) s += ", dust";
  if (m_options.dofAperture > 0.0f) s += ", depth of field";
  if (m_options.camera.active()) {
    s += ", camera " + cameraTargetName(m_options.camera) +
         (m_options.camera.autoFrame ? " auto-framed" : "");
  }
  if (!m_options.framesDir.empty()) {
    s += ", frames in " + m_options.framesDir + " every " + std::to_string(m_options.every) +
         (m_options.every == 1 ? " step" : " steps");
  }
  if (!m_options.screenshotPath.empty()) s += ", screenshot " + m_options.screenshotPath;
  if (m_video) {
    s += ", video " + m_options.videoPath + " every " + std::to_string(m_options.every) +
         (m_options.every == 1 ? " step" : " steps");
  }
  return s + "; " + m_context->description();
}

std::string FrameRecorder::frameName(int index) {
  char name[32];
  std::snprintf(name, sizeof name, "frame_%06d.png", index);
  return name;
}

render::Image FrameRecorder::renderState(const sim::Simulation& sim) {
  render::Camera& camera = m_scene->camera();
  const CameraMode& mode = m_options.camera;
  if (mode.active()) {  // the window's glide, a frame of video (kHeadlessFrameSeconds) at a time
    const CameraAim aim = m_aim.aim(sim, mode, m_scene->view().settings());
    m_follower.follow(camera, mode, aim, kHeadlessFrameSeconds,
                      float(m_options.width) / float(std::max(m_options.height, 1)));
  }
  const float framed = mode.autoFrame && m_follower.framedDistance() > 0.0f
                           ? m_follower.framedDistance()
                           : m_scene->framedDistance();
  render::applyCameraPath(camera, m_script, static_cast<float>(sim.time()), framed);
  camera.autoRotateSpeed = m_script.autoRotate;
  camera.autoRotateAngle = 0.0f;
  camera.advance(kHeadlessFrameSeconds * static_cast<float>(m_written));
  OverlayRequest request;
  request.cells = m_options.overlay == OverlayKind::Tree;
  request.groups = m_options.overlay == OverlayKind::Groups;
  request.domains = m_options.overlay == OverlayKind::Domains;
  request.minLevel = m_options.overlayMinLevel;
  request.maxLevel = m_options.overlayMaxLevel;
  const std::string line = m_scene->setOverlay(sim, request, walkBoxesOf(sim));
  if (!line.empty()) std::cerr << line << '\n';
  return m_scene->render(sim);
}

void FrameRecorder::record(const sim::Simulation& sim) {
  const render::Image image = renderState(sim);
  if (!m_options.framesDir.empty()) {
    writePngAtomically(std::filesystem::path(m_options.framesDir) / frameName(m_written), image);
  }
  if (m_video) m_video->write(image);
  ++m_written;
}

// --pick: the walk of the picked particle's group on a CPU tree of this state (any backend),
// drawn over the tree overlay; none without --pick.
std::vector<render::OverlayBox> FrameRecorder::walkBoxesOf(const sim::Simulation& sim) {
  if (m_options.pickId < 0) return {};
  WalkInspection walk;
  try {
    walk.inspect(sim.particles(), sim.params(), static_cast<std::uint32_t>(m_options.pickId),
                 sim.time());
  } catch (const std::out_of_range& e) {
    throw std::runtime_error(std::string("--pick: ") + e.what());
  }
  if (!m_walkNoted) {
    std::cout << "bhviz: " << walk.summary() << '\n';
    m_walkNoted = true;
  }
  return walkBoxes(walk, WalkOverlay{});
}

void FrameRecorder::start(const sim::Simulation& sim) {
  m_scene->frame(sim.particles());
  if (m_options.framesDir.empty() && !m_video) return;
  record(sim);
}

void FrameRecorder::afterStep(const sim::Simulation& sim, int step) {
  if ((m_options.framesDir.empty() && !m_video) || step % m_options.every != 0) return;
  record(sim);
}

void FrameRecorder::finish(const sim::Simulation& sim) {
  if (!m_options.screenshotPath.empty())
    writePngAtomically(m_options.screenshotPath, renderState(sim));
  if (m_video) m_video->finish();
}

}  // namespace bhviz::app
