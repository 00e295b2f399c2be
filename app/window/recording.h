#pragma once
// The window's Record button (and the window's --video): every K-th displayed frame's scene
// (no panels) rendered offscreen at the size recording started with, written as numbered PNG
// frames (as headless --frames names them) or piped to ffmpeg (app/video.h).

#include <memory>
#include <string>

#include "app/core/video.h"
#include "render/camera.h"
#include "render/renderer.h"

namespace bhviz::app {

class WindowRecorder {
 public:
  /// PNG frames into `dir` (created if missing). Throws std::runtime_error naming the problem.
  void startFrames(const std::string& dir, int width, int height, int every);
  /// A video through `ffmpeg`. Throws VideoError.
  void startVideo(const std::string& ffmpeg, const std::string& path, int width, int height,
                  int every);
  /// Once per displayed frame: every K-th frame is rendered and written. Throws (and stops
  /// recording) when a frame cannot be written.
  void frame(render::Renderer& renderer, const render::Camera& camera,
             const render::RenderParams& params);
  /// Stops and returns one line saying what was written. Throws VideoError when ffmpeg failed.
  std::string stop();

  bool active() const { return m_active; }
  int framesWritten() const { return m_written; }
  /// The directory or video being written.
  const std::string& target() const { return m_target; }

 private:
  void begin(const std::string& target, int width, int height, int every);

  bool m_active = false;
  std::string m_target;
  std::string m_framesDir;  // PNG frames, or empty for a video
  std::unique_ptr<VideoWriter> m_video;
  std::unique_ptr<render::OffscreenTarget> m_offscreen;  // the recording's, from its first frame
  int m_width = 0, m_height = 0, m_every = 1;
  long long m_seen = 0;  // frames offered since the start
  int m_written = 0;
};

}  // namespace bhviz::app
