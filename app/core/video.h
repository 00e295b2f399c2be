#pragma once
// Video files through ffmpeg: raw RGBA frames piped to an ffmpeg process found on PATH, which
// encodes them with libx264 (yuv420p, CRF 18) into FILE.tmp and is renamed to FILE when it
// exits cleanly. No GL here: frames come in as images (rows from the top), so the headless
// recorder and the window's feed it alike.

#include <sys/types.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "render/image.h"

namespace bhviz::app {

/// Frames per second of every video we write.
inline constexpr int kVideoFps = 30;

/// ffmpeg could not be started, refused the frames or failed. what() is one line.
struct VideoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The full path of `name` on $PATH (an executable regular file), or nullopt.
std::optional<std::string> findOnPath(const std::string& name);
/// The ffmpeg --video uses (findOnPath("ffmpeg")).
std::optional<std::string> findFfmpeg();
/// One line for a missing ffmpeg: what to install, and the PNG alternative.
std::string ffmpegMissingMessage();
/// The container for a video path: .mp4, .mkv or .mov; throws VideoError otherwise.
std::string videoMuxer(const std::string& path);

class VideoWriter {
 public:
  /// Starts ffmpeg writing `path` (through path.tmp) from width × height RGBA frames. Odd
  /// sides lose their last row or column (yuv420p needs even ones). Throws VideoError.
  VideoWriter(const std::string& ffmpeg, const std::string& path, int width, int height,
              int fps = kVideoFps);
  /// Without finish(): stops ffmpeg and removes the temporary file.
  ~VideoWriter();
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  /// Sends one frame (width × height, as constructed). Throws VideoError when ffmpeg has gone
  /// (a broken pipe) or the image has another size; the writer is then finished.
  void write(const render::Image& image);
  /// Closes the pipe, waits for ffmpeg and renames the file into place. Throws VideoError with
  /// ffmpeg's last error line when it failed (and leaves no temporary behind).
  void finish();

  int framesWritten() const { return m_frames; }
  const std::string& path() const { return m_path; }

 private:
  void abandon();
  [[noreturn]] void fail(const std::string& what);
  std::string ffmpegTail() const;

  std::string m_path;
  std::string m_tmp;
  std::string m_log;  // ffmpeg's stderr
  int m_width = 0;
  int m_height = 0;
  int m_fd = -1;  // the pipe to ffmpeg's stdin
  pid_t m_pid = -1;
  int m_frames = 0;
};

}  // namespace bhviz::app
