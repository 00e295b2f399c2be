#include "app/core/video.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

extern char** environ;

namespace bhviz::app {

namespace {

namespace fs = std::filesystem;

std::string inQuotes(const std::string& s) { return "'" + s + "'"; }

// A write to a pipe whose reader has gone must fail with EPIPE, not kill the process.
void ignoreSigpipe() {
  static const bool once = [] {
    ::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)once;
}

std::string exitDescription(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

}  // namespace

std::optional<std::string> findOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr || name.empty()) return std::nullopt;
  std::string list = path;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(':', start), list.size());
    const std::string dir = end > start ? list.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<std::string> findFfmpeg() { return findOnPath("ffmpeg"); }

std::string ffmpegMissingMessage() {
  return "--video needs ffmpeg on PATH, and none was found (apt-get install ffmpeg); "
         "--frames DIR writes PNG frames without it";
}

std::string videoMuxer(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".mp4") return "mp4";
  if (ext == ".mkv") return "matroska";
  if (ext == ".mov") return "mov";
  throw VideoError(inQuotes(path) + ": unknown video extension " + inQuotes(ext) +
                   " (must be .mp4, .mkv or .mov)");
}

VideoWriter::VideoWriter(const std::string& ffmpeg, const std::string& path, int width, int height,
                         int fps)
    : m_path(path), m_tmp(path + ".tmp"), m_width(width), m_height(height) {
  const std::string muxer = videoMuxer(path);
  if (width < 2 || height < 2)
    throw VideoError(inQuotes(path) + ": a video needs at least 2x2 pixels");
  ignoreSigpipe();
  char logName[] = "/tmp/bhviz-ffmpeg-XXXXXX";
  const int logFd = ::mkstemp(logName);
  if (logFd < 0)
    throw VideoError(std::string("cannot create ffmpeg's log: ") + std::strerror(errno));
  ::close(logFd);
  m_log = logName;

  std::vector<std::string> args{ffmpeg,
                                "-hide_banner",
                                "-loglevel",
                                "error",
                                "-y",
                                "-f",
                                "rawvideo",
                                "-pix_fmt",
                                "rgba",
                                "-s",
                                std::to_string(width) + "x" + std::to_string(height),
                                "-framerate",
                                std::to_string(fps),
                                "-i",
                                "pipe:0"};
  // Images arrive with rows from the top (render::Image), as ffmpeg expects: no vflip. yuv420p
  // subsamples 2x2, so an odd side drops its last row or column.
  if (width % 2 != 0 || height % 2 != 0) {
    args.insert(args.end(), {"-vf", "crop=" + std::to_string(width & ~1) + ":" +
                                        std::to_string(height & ~1) + ":0:0"});
  }
  args.insert(args.end(),
              {"-c:v", "libx264", "-preset", "medium", "-crf", "18", "-pix_fmt", "yuv420p"});
  if (muxer != "matroska") args.insert(args.end(), {"-movflags", "+faststart"});
  args.insert(args.end(), {"-f", muxer, m_tmp});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::remove(m_log.c_str());
    throw VideoError(std::string("cannot create a pipe to ffmpeg: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, m_log.c_str(), O_WRONLY | O_TRUNC, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);  // ours is ignored; ffmpeg gets the usual disposition
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  const int rc = posix_spawn(&m_pid, ffmpeg.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[0]);
  m_fd = fds[1];
  if (rc != 0) {
    m_pid = -1;
    abandon();
    throw VideoError("cannot start " + inQuotes(ffmpeg) + ": " + std::strerror(rc));
  }
}

VideoWriter::~VideoWriter() { abandon(); }

void VideoWriter::abandon() {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
  if (m_pid > 0) {
    ::kill(m_pid, SIGTERM);
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
    m_pid = -1;
  }
  std::error_code ec;
  fs::remove(m_tmp, ec);
  if (!m_log.empty()) fs::remove(m_log, ec);
  m_log.clear();
}

std::string VideoWriter::ffmpegTail() const {
  std::ifstream log(m_log);
  std::string line, last;
  while (std::getline(log, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last.empty() ? "" : ": " + last;
}

void VideoWriter::fail(const std::string& what) {
  // ffmpeg's own reason, read before abandon() removes its log.
  int status = 0;
  std::string exit;
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
  if (m_pid > 0) {
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
    m_pid = -1;
    exit = " (ffmpeg " + exitDescription(status) + ")";
  }
  const std::string reason = ffmpegTail();
  abandon();
  throw VideoError(inQuotes(m_path) + ": " + what + exit + reason);
}

void VideoWriter::write(const render::Image& image) {
  if (m_fd < 0) throw VideoError(inQuotes(m_path) + ": the video is already finished");
  if (image.width != m_width || image.height != m_height) {
    fail("a frame of " + std::to_string(image.width) + "x" + std::to_string(image.height) +
         " in a " + std::to_string(m_width) + "x" + std::to_string(m_height) + " video");
  }
  const std::uint8_t* at = image.rgba.data();
  std::size_t left = image.rgba.size();
  while (left > 0) {
    const ssize_t n = ::write(m_fd, at, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno == EPIPE ? "ffmpeg stopped taking frames"
                          : std::string("writing to ffmpeg failed: ") + std::strerror(errno));
    }
    at += n;
    left -= static_cast<std::size_t>(n);
  }
  ++m_frames;
}

void VideoWriter::finish() {
  if (m_fd < 0) throw VideoError(inQuotes(m_path) + ": the video is already finished");
  ::close(m_fd);
  m_fd = -1;
  int status = 0;
  while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
  }
  m_pid = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string reason = ffmpegTail();
    abandon();
    throw VideoError(inQuotes(m_path) + ": ffmpeg failed (" + exitDescription(status) + ")" +
                     reason);
  }
  std::error_code ec;
  fs::rename(m_tmp, m_path, ec);
  if (ec) {
    abandon();
    throw VideoError(inQuotes(m_path) + ": cannot rename the temporary file into place (" +
                     ec.message() + ")");
  }
  abandon();  // removes the log; the temporary is gone already
}

}  // namespace bhviz::app
