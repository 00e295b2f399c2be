#pragma once
// Headless pictures of a run: the scene (particles through the bridge, boxes, camera framed on
// the initial state) rendered offscreen, read back and written as PNG files.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "app/core/video.h"
#include "app/core/view_options.h"
#include "app/scene/camera_follow.h"
#include "app/scene/gl_context.h"
#include "app/scene/scene_pipeline.h"
#include "render/camera.h"
#include "render/camera_path.h"
#include "render/image.h"
#include "render/renderer.h"
#include "sim/particles.h"
#include "sim/simulation.h"

namespace bhviz::app {

/// The scene pipeline (scene_pipeline.h) drawing into an offscreen target read back as an
/// image: headless pictures and the tests. The camera, look and colours are fixed from the
/// initial state, so that frames can be compared.
class SceneRenderer {
 public:
  SceneRenderer(int width, int height, const ViewSettings& view);

  /// Frames the camera on the visible particles, fixes the speed scale and the sprite style.
  void frame(const sim::Particles& initial);
  void setBoxes(const std::vector<render::OverlayBox>& boxes) { m_scene.setBoxes(boxes); }
  /// The overlay of `sim`'s last force evaluation (written on the device where the backend
  /// keeps its tree there), with `over` drawn over it. Returns a line to show once, else empty.
  std::string setOverlay(const sim::Simulation& sim, const OverlayRequest& request,
                         const std::vector<render::OverlayBox>& over = {}) {
    return m_scene.writeOverlay(sim, request, over);
  }
  /// The boxes last set on the host (empty when the overlay was written on the device).
  const std::vector<render::OverlayBox>& boxes() const { return m_scene.hostBoxes(); }
  /// Relative force errors by id for ColorBy::ForceError (ParticleView::setErrors).
  void setErrors(std::shared_ptr<const std::vector<float>> errorById) {
    m_scene.setErrors(std::move(errorById));
  }
  /// Renders `p` and reads the image back.
  render::Image render(const sim::Particles& p);
  /// Renders the simulation's current state without copying it: on a device backend a kernel
  /// writes the vertex buffer through CUDA–GL interop, as in the window.
  render::Image render(const sim::Simulation& sim);

  render::Camera& camera() { return m_scene.camera(); }
  render::RenderParams& params() { return m_scene.look(); }
  const ParticleView& view() const { return m_scene.view(); }
  const Framing& framing() const { return m_scene.framing(); }
  float framedDistance() const { return m_scene.framedDistance(); }

 private:
  ScenePipeline m_scene;
  render::OffscreenTarget m_target;
  bool m_writerNoted = false;
};

/// Writes `image` as a PNG to `path` atomically (PATH.tmp, then renamed). Throws
/// std::runtime_error naming the file.
void writePngAtomically(const std::filesystem::path& path, const render::Image& image);

/// --frames, --screenshot, --video: owns the headless context, writes the PNG files and feeds
/// ffmpeg.
class FrameRecorder {
 public:
  /// Creates the headless GL context (throws GlContextUnavailable) and the renderer.
  FrameRecorder(const FrameOptions& options, int maxBinDepth);
  ~FrameRecorder();

  /// One line for the run's header: what is written, and on which GL.
  std::string description() const;
  /// Frames the camera on the initial state and writes frame 0 (with --frames).
  void start(const sim::Simulation& sim);
  /// After `step` dtMax intervals: writes a frame when step is a multiple of --frame-every.
  void afterStep(const sim::Simulation& sim, int step);
  /// Writes the screenshot of the final state (with --screenshot) and finishes the video
  /// (throws VideoError when ffmpeg failed).
  void finish(const sim::Simulation& sim);
  int framesWritten() const { return m_written; }
  /// A scenario's scripted camera: the path at the simulation's time, plus auto_rotate turning
  /// the view by kHeadlessFrameSeconds per written frame. Call before start().
  void setCameraScript(render::CameraScript script) { m_script = std::move(script); }
  /// frame_000042.png: frames are numbered consecutively (for ffmpeg -i frame_%06d.png).
  static std::string frameName(int index);

 private:
  render::Image renderState(const sim::Simulation& sim);
  void record(const sim::Simulation& sim);
  std::vector<render::OverlayBox> walkBoxesOf(const sim::Simulation& sim);

  FrameOptions m_options;
  std::unique_ptr<HeadlessGlContext> m_context;  // first member: destroyed last
  std::unique_ptr<SceneRenderer> m_scene;
  std::unique_ptr<VideoWriter> m_video;  // --video: ffmpeg started with the recorder
  int m_written = 0;
  bool m_walkNoted = false;
  render::CameraScript m_script;
  AimSampler m_aim;  // --camera, --auto-frame
  CameraFollower m_follower;
};

}  // namespace bhviz::app
