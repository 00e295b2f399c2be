// The picture options of the command line: --frames, --screenshot, --video, their size, colours,
// look (dust, depth of field), camera and overlay.
#include <cmath>
#include <string>
#include <tuple>

#include "app/core/cli.h"
#include "app/core/cli_args.h"
#include "app/core/cli_values.h"
#include "app/core/video.h"

namespace bhviz::app::cli {

namespace {

// A number in [lo, hi], or UsageError naming the option and the range.
float toBounded(const std::string& option, const std::string& text, float lo, float hi) {
  const float v = toFloat(option, text);
  if (!(v >= lo && v <= hi)) {
    std::ostringstream range;
    range << "[" << lo << ", " << hi << "]";
    throw UsageError(option + " = " + text + " is out of range: must be in " + range.str());
  }
  return v;
}

// --dust, --dof, --focus: the render's demo options (render::Extinction, DepthOfField).
void lookOptions(const CLI::App& app, const RawArgs& r, FrameOptions& f) {
  if (app.count("--dust") > 0) f.dust = toBounded("--dust", r.dust, 0.0f, 10.0f);
  if (app.count("--dof") > 0) f.dofAperture = toBounded("--dof", r.dof, 0.0f, 0.5f);
  if (app.count("--focus") > 0) {
    if (app.count("--dof") == 0) throw UsageError("--focus needs --dof A");
    f.dofFocus = toBounded("--focus", r.focus, 0.1f, 10.0f);
  }
}

}  // namespace

// Pictures: offscreen OpenGL through a headless EGL context (app/frames.h).
void defineFrameOptions(CLI::App& app, RawArgs& r) {
  app.add_option("--frames", r.frames,
                 "Write a PNG of the scene to DIR (created if missing) at the start and every "
                 "--frame-every steps: frame_000000.png, frame_000001.png, ...")
      ->type_name("DIR");
  app.add_option("--frame-every", r.frameEvery, "Steps between frames, >= 1 (default 1)")
      ->type_name("K");
  app.add_option("--screenshot", r.screenshot, "Write a PNG of the final state")
      ->type_name("FILE.png");
  app.add_option("--size", r.size,
                 "Picture (and window) size in pixels, each side in [16, 8192] (default 1280x720)")
      ->type_name("WxH");
  app.add_option("--color", r.color,
                 "Colour particles by component, speed, bin (time-step bin) or population "
                 "(stellar temperatures: young blue-white and old yellow disk stars, old "
                 "yellow-red bulge) (default component)")
      ->type_name("NAME");
  app.add_option("--dust", r.dust,
                 "Dust in the disks that absorbs the light behind it: half the disk particles "
                 "carry it; X in [0, 10] scales its opacity, 1 = a face-on optical depth of "
                 "about 1 at a disk's centre (default 0: no dust)")
      ->type_name("X");
  app.add_option("--dof", r.dof,
                 "Depth of field: lens diameter / focus distance, in [0, 0.5]; stars away from "
                 "the focus spread over their circle of confusion, keeping their light "
                 "(e.g. 0.05; default 0: everything sharp)")
      ->type_name("A");
  app.add_option("--focus", r.focus,
                 "With --dof: the focus distance as a multiple of the camera's distance to the "
                 "scene's centre, in [0.1, 10] (default 1)")
      ->type_name("F");
  app.add_flag("--show-halo", r.showHalo, "Draw the dark-matter halo too (hidden by default)");
  app.add_option("--camera", r.camera,
                 "What the camera follows: free (default), centre (the centre of mass) or "
                 "galaxy:K (the K-th galaxy's densest part, K from 1), in the window and in "
                 "headless frames and video")
      ->type_name("TARGET");
  app.add_flag("--auto-frame", r.autoFrame,
               "The camera's distance follows the spread of the drawn particles, so the view "
               "widens as tidal tails grow");
  app.add_option("--overlay", r.overlay,
                 "Boxes over the particles: tree (octree cells), groups (walk groups), domains "
                 "(under mpirun: each rank's ORB domain) or none (default none)")
      ->type_name("NAME");
  app.add_option("--overlay-levels", r.overlayLevels,
                 "Tree levels drawn by --overlay tree, A:B with 0 <= A <= B <= 21 (default 2:6)")
      ->type_name("A:B");
  app.add_option("--video", r.video,
                 "Encode the frames (the initial state, then every --frame-every steps headless "
                 "or frames in the window) as a video with ffmpeg from PATH: .mp4, .mkv or .mov")
      ->type_name("FILE.mp4");
  app.add_option("--pick", r.pick,
                 "Show the tree walk of particle ID's group: the cells it accepts as multipoles, "
                 "the leaves it takes particle by particle and the cells the MAC opens "
                 "(window: the Walk panel; headless: boxes in --frames/--screenshot); "
                 "computed on a CPU tree of the state, whatever the backend")
      ->type_name("ID");
}

FrameOptions frameOptions(const CLI::App& app, const RawArgs& r) {
  FrameOptions f;
  auto given = [&](const char* name) { return app.count(name) > 0; };
  if (given("--frame-every")) {
    f.every = static_cast<int>(toInteger("--frame-every", r.frameEvery, 1, 1'000'000'000));
  }
  std::tie(f.width, f.height) = toSize(r.size);
  const auto color = parseColorBy(r.color);
  if (!color) {
    throw UsageError("--color = " + quoted(r.color) +
                     " is not known: must be component, speed, bin or population");
  }
  f.colorBy = *color;
  f.showHalo = r.showHalo;
  const auto overlay = parseOverlayKind(r.overlay);
  if (!overlay) {
    throw UsageError("--overlay = " + quoted(r.overlay) +
                     " is not known: must be tree, groups, domains or none");
  }
  f.overlay = *overlay;
  std::tie(f.overlayMinLevel, f.overlayMaxLevel) = toLevels(r.overlayLevels);
  lookOptions(app, r, f);
  const auto camera = parseCameraTarget(r.camera);
  if (!camera) {
    throw UsageError("--camera = " + quoted(r.camera) +
                     " is not known: must be free, centre or galaxy:K (K = 1, 2, ...)");
  }
  f.camera = *camera;
  f.camera.autoFrame = r.autoFrame;
  if (given("--overlay-levels") && f.overlay != OverlayKind::Tree) {
    throw UsageError("--overlay-levels applies to --overlay tree only");
  }
  // Options that shape pictures, in a headless run that makes none, are a mistake worth a line.
  // The window shows pictures, so there they shape the window's.
  const bool headless = r.headless;
  if (headless && !given("--frames") && !given("--screenshot") && !given("--video")) {
    for (const char* name :
         {"--frame-every", "--size", "--color", "--show-halo", "--overlay", "--overlay-levels",
          "--pick", "--dust", "--dof", "--focus", "--camera", "--auto-frame"}) {
      if (given(name)) {
        throw UsageError(std::string(name) +
                         " needs --frames DIR, --video FILE or --screenshot FILE");
      }
    }
  }
  if (!headless && given("--frames")) {
    throw UsageError("--frames needs --headless (in the window, F12 saves a screenshot)");
  }
  if (given("--frame-every") && !given("--frames") && !given("--video")) {
    throw UsageError("--frame-every needs --frames DIR or --video FILE");
  }
  return f;
}

// --video: a known container and a writable path; headless, ffmpeg must be on PATH before any
// work starts. The window opens without it and says so (its record button stays disabled).
void videoOption(const RawArgs& r, Options& o, OutputSet& outputs) {
  try {
    videoMuxer(r.video);
  } catch (const VideoError& e) {
    throw UsageError(std::string("--video = ") + e.what());
  }
  if (const auto ffmpeg = findFfmpeg()) {
    o.frames.ffmpeg = *ffmpeg;
  } else if (o.headless) {
    throw UsageError(ffmpegMissingMessage());
  }
  requireWritable("--video", r.video);
  outputs.addFile("--video", r.video);
  o.frames.videoPath = r.video;
}

}  // namespace bhviz::app::cli
