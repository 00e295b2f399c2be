#include "app/window/recording.h"

#include <filesystem>
#include <stdexcept>

#include "app/scene/frames.h"
#include "render/image.h"

namespace bhviz::app {

void WindowRecorder::begin(const std::string& target, int width, int height, int every) {
  if (every < 1) throw std::runtime_error("record every K frames: K must be >= 1");
  m_target = target;
  m_offscreen.reset();  // sized at the next frame
  m_width = width;
  m_height = height;
  m_every = every;
  m_seen = 0;
  m_written = 0;
  m_active = true;
}

void WindowRecorder::startFrames(const std::string& dir, int width, int height, int every) {
  namespace fs = std::filesystem;
  if (dir.empty()) throw std::runtime_error("the frames directory is empty");
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    throw std::runtime_error("'" + dir + "' is not a directory");
  }
  fs::create_directories(dir, ec);
  if (ec)
    throw std::runtime_error("'" + dir + "': cannot create the directory (" + ec.message() + ")");
  m_video.reset();
  m_framesDir = dir;
  begin(dir, width, height, every);
}

void WindowRecorder::startVideo(const std::string& ffmpeg, const std::string& path, int width,
                                int height, int every) {
  m_video = std::make_unique<VideoWriter>(ffmpeg, path, width, height);
  m_framesDir.clear();
  begin(path, width, height, every);
}

void WindowRecorder::frame(render::Renderer& renderer, const render::Camera& camera,
                           const render::RenderParams& params) {
  if (!m_active || m_seen++ % m_every != 0) return;
  try {
    // One offscreen target per recording (at the size it began with), made at its first frame:
    // the GL context is current here.
    if (!m_offscreen) m_offscreen = std::make_unique<render::OffscreenTarget>(m_width, m_height);
    renderer.render(camera, params, m_offscreen->target());
    const render::Image image = m_offscreen->read();
    if (m_video) {
      m_video->write(image);
    } else {
      writePngAtomically(std::filesystem::path(m_framesDir) / FrameRecorder::frameName(m_written),
                         image);
    }
    ++m_written;
  } catch (...) {
    m_active = false;
    m_offscreen.reset();
    m_video.reset();  // stops ffmpeg and removes its temporary file
    throw;
  }
}

std::string WindowRecorder::stop() {
  if (!m_active) return "";
  m_active = false;
  m_offscreen.reset();
  const std::string line =
      std::to_string(m_written) + (m_written == 1 ? " frame" : " frames") + " in " + m_target;
  if (m_video) {
    std::unique_ptr<VideoWriter> video = std::move(m_video);
    video->finish();
  }
  return "bhviz: recorded " + line;
}

}  // namespace bhviz::app
