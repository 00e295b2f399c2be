// Video through ffmpeg (app/video.h): the headless --video run checked with ffprobe (frame count
// and size), the missing-ffmpeg line before any work, an ffmpeg that fails, and the writer's
// own checks. Tests that need ffmpeg skip without it (it is optional: apt-get install ffmpeg).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "app/core/video.h"
#include "process_support.h"
#include "render/image.h"

namespace {

using namespace bhviz::test;
namespace app = bhviz::app;

bool haveFfmpeg() {
  return app::findFfmpeg().has_value() && app::findOnPath("ffprobe").has_value();
}
bool noGl() {
  const char* v = std::getenv("BHVIZ_NO_GL");
  return v != nullptr && v[0] == '1';
}

struct Probe {
  int frames = -1, width = -1, height = -1;
  std::string codec, pixFmt;
};

// ffprobe counts the decoded frames (not the container's claim).
Probe probe(const fs::path& video) {
  TempDir dir;
  const fs::path out = dir.path / "probe.csv";
  const std::string cmd =
      "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
      "stream=nb_read_frames,width,height,codec_name,pix_fmt -of "
      "default=noprint_wrappers=1 '" +
      video.string() + "' >'" + out.string() + "'";
  Probe p;
  if (std::system(cmd.c_str()) != 0) return p;
  std::ifstream f(out);
  std::string line;
  while (std::getline(f, line)) {
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "nb_read_frames") p.frames = std::stoi(value);
    if (key == "width") p.width = std::stoi(value);
    if (key == "height") p.height = std::stoi(value);
    if (key == "codec_name") p.codec = value;
    if (key == "pix_fmt") p.pixFmt = value;
  }
  return p;
}

std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

TEST(VideoExe, HeadlessVideoHasTheFramesAndSizeAsked) {
  if (!haveFfmpeg())
    GTEST_SKIP() << "ffmpeg/ffprobe not on PATH (optional: apt-get install ffmpeg)";
  if (noGl()) GTEST_SKIP() << "BHVIZ_NO_GL=1";
  TempDir dir;
  const fs::path video = dir.path / "run.mp4";
  // Frames of the initial state and of steps 2, 4, 6: four. 321x181 is cropped to even sides.
  const Process p = runBhviz(
      "--headless --backend cpu --scenario plummer --n 2000 --steps 6 "
      "--frame-every 2 --size 321x181 --video " +
      video.string());
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.out.find("4 frames in " + video.string()), std::string::npos) << p.out;
  EXPECT_FALSE(fs::exists(video.string() + ".tmp"));
  const Probe v = probe(video);
  EXPECT_EQ(v.frames, 4);
  EXPECT_EQ(v.width, 320);
  EXPECT_EQ(v.height, 180);
  EXPECT_EQ(v.codec, "h264");
  EXPECT_EQ(v.pixFmt, "yuv420p");
}

TEST(VideoExe, VideoAndFramesTogetherShareTheFrames) {
  if (!haveFfmpeg())
    GTEST_SKIP() << "ffmpeg/ffprobe not on PATH (optional: apt-get install ffmpeg)";
  if (noGl()) GTEST_SKIP() << "BHVIZ_NO_GL=1";
  TempDir dir;
  const fs::path video = dir.path / "run.mkv", frames = dir.path / "frames";
  const Process p = runBhviz(
      "--headless --backend cpu --scenario plummer --n 1000 --steps 2 "
      "--size 64x48 --frames " +
      frames.string() + " --video " + video.string());
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_TRUE(fs::exists(frames / "frame_000002.png"));
  const Probe v = probe(video);
  EXPECT_EQ(v.frames, 3);
  EXPECT_EQ(v.width, 64);
  EXPECT_EQ(v.height, 48);
}

TEST(VideoExe, MissingFfmpegIsOneLineAndStatusTwoBeforeAnyWork) {
  TempDir dir;
  const fs::path video = dir.path / "run.mp4";
  // A PATH without ffmpeg; bhviz itself is run by its full path. --n is large enough that any
  // work before the check would show in the time and the output.
  const Process p = runBhviz(
      "--headless --backend cpu --scenario plummer --n 2000000 --steps 50 "
      "--video " +
          video.string(),
      "env PATH=" + dir.path.string());
  EXPECT_EQ(p.status, 2) << p.err;
  EXPECT_EQ(lines(p.err), 1u) << p.err;
  EXPECT_NE(p.err.find("--video needs ffmpeg on PATH"), std::string::npos) << p.err;
  EXPECT_TRUE(p.out.empty()) << p.out;
  EXPECT_FALSE(fs::exists(video));
}

TEST(VideoExe, UnknownContainerIsAUsageError) {
  TempDir dir;
  const Process p =
      runBhviz("--headless --scenario plummer --n 100 --video " + (dir.path / "run.gif").string());
  EXPECT_EQ(p.status, 2) << p.err;
  EXPECT_NE(p.err.find(".mp4, .mkv or .mov"), std::string::npos) << p.err;
}

// An "ffmpeg" that refuses at once: the frames meet a broken pipe. One line with its reason and
// status 1, no crash by SIGPIPE, and no file left behind.
TEST(VideoExe, FailingFfmpegIsReportedNotACrash) {
  if (noGl()) GTEST_SKIP() << "BHVIZ_NO_GL=1";
  TempDir dir;
  const fs::path fake = dir.path / "bin";
  fs::create_directories(fake);
  {
    std::ofstream f(fake / "ffmpeg");
    f << "#!/bin/sh\necho 'Unknown encoder libx264' >&2\nexit 3\n";
  }
  ::chmod((fake / "ffmpeg").c_str(), 0755);
  const fs::path video = dir.path / "run.mp4";
  const Process p = runBhviz(
      "--headless --backend cpu --scenario plummer --n 2000 --steps 3 "
      "--size 1280x720 --quiet --video " +
          video.string(),
      "env PATH=" + fake.string() + ":/usr/bin:/bin");
  EXPECT_EQ(p.status, 1) << p.err;
  EXPECT_EQ(lines(p.err), 1u) << p.err;
  EXPECT_NE(p.err.find("Unknown encoder libx264"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("exit status 3"), std::string::npos) << p.err;
  EXPECT_FALSE(fs::exists(video));
  EXPECT_FALSE(fs::exists(video.string() + ".tmp"));
}

TEST(VideoWriter, FrameOfAnotherSizeIsRefusedAndNothingIsLeft) {
  const auto ffmpeg = app::findFfmpeg();
  if (!ffmpeg) GTEST_SKIP() << "ffmpeg not on PATH";
  TempDir dir;
  const fs::path video = dir.path / "a.mp4";
  app::VideoWriter w(*ffmpeg, video.string(), 32, 32);
  bhviz::render::Image good{32, 32, std::vector<std::uint8_t>(32 * 32 * 4, 128)};
  w.write(good);
  bhviz::render::Image bad{16, 32, std::vector<std::uint8_t>(16 * 32 * 4, 0)};
  EXPECT_THROW(w.write(bad), app::VideoError);
  EXPECT_THROW(w.finish(), app::VideoError);  // already finished by the failure
  EXPECT_FALSE(fs::exists(video));
  EXPECT_FALSE(fs::exists(video.string() + ".tmp"));
}

TEST(VideoWriter, FindsExecutablesOnPathOnly) {
  EXPECT_TRUE(app::findOnPath("sh").has_value());
  EXPECT_FALSE(app::findOnPath("bhviz-no-such-program").has_value());
  EXPECT_EQ(app::videoMuxer("x.MP4"), "mp4");
  EXPECT_EQ(app::videoMuxer("x.mkv"), "matroska");
  EXPECT_THROW(app::videoMuxer("x.avi"), app::VideoError);
}

}  // namespace
