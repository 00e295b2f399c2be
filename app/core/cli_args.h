#pragma once
// The command line's raw text (RawArgs) and the picture options' part of its parsing, shared by
// app/core/cli.cpp and app/core/cli_pictures.cpp. Private to app/core.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "app/core/options.h"
#include "app/core/output_paths.h"

namespace bhviz::app::cli {

// Every value is taken as text and converted here rather than by CLI11, so that a bad value
// gets our one-line message with the allowed range instead of CLI11's "Could not convert".
struct RawArgs {
  bool headless = false;
  std::string scenario = "merger";
  std::string n = "20000";
  std::string steps = "10";
  std::string theta, mac, macParam, nLeaf, nGroup, softening, eta, dt, maxBinDepth, sharedDt;
  std::string rebuild;
  bool blockSteps = false;
  std::string quadrupole, curve, p2p, expansionRatio, expansionBudget;
  std::string backend = "auto";
  std::string seed = "1";
  std::string threads, stats, dumpAccel, rebalance;
  bool quiet = false;
  std::string frames, screenshot;
  std::string frameEvery = "1";
  std::string size = "1280x720";
  std::string color = "component";
  bool showHalo = false;
  std::string overlay = "none";
  std::string overlayLevels = "2:6";
  std::string quitAfter;
  std::string pick;                    // --pick ID
  std::string load, save;              // --load, --save
  std::vector<std::string> saveEvery;  // --save-every K DIR
  std::string sweep, out;              // --sweep, --out (app/sweep.h)
  std::string video;                   // --video
  std::string dust, dof, focus;        // --dust, --dof, --focus
  std::string camera = "free";         // --camera
  std::string lesson;                  // --lesson
  bool listLessons = false;            // --list-lessons
  bool autoFrame = false;              // --auto-frame
};

/// --frames, --screenshot, --size, --color, the look, --camera, --overlay, --video, --pick.
void defineFrameOptions(CLI::App& app, RawArgs& r);
/// Their values, checked; a picture option in a headless run that makes no picture is refused.
FrameOptions frameOptions(const CLI::App& app, const RawArgs& r);
/// --video: a known container and a writable path (ffmpeg on PATH when headless).
void videoOption(const RawArgs& r, Options& o, OutputSet& outputs);

}  // namespace bhviz::app::cli
