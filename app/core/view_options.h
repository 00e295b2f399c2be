#pragma once
// What the pictures show, as the command line (and later the UI) chooses it. No GL here: the
// CLI includes this without pulling in the renderer.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "app/core/camera_mode.h"

namespace bhviz::app {

/// What a particle's colour shows. ForceError: the accuracy meter's relative force error of
/// each measured particle (the window only; parseColorBy does not offer it). Population: a
/// stellar temperature drawn from the particle's component (young and old disk stars, old bulge
/// and spheres; app/core/vertex_rule.h) on a blackbody palette.
enum class ColorBy { Component, Speed, Bin, ForceError, Population };
/// Which boxes are drawn over the particles.
enum class OverlayKind { None, Tree, Groups, Domains };

std::optional<ColorBy> parseColorBy(const std::string& text);
std::string toString(ColorBy c);
std::optional<OverlayKind> parseOverlayKind(const std::string& text);
std::string toString(OverlayKind k);

/// What the particles look like: their colouring and which components are drawn.
struct ViewSettings {
  ColorBy colorBy = ColorBy::Component;
  /// Per sim::Component (Sphere, Disk, Bulge, Halo): drawn or hidden. Dark matter is hidden by
  /// default.
  std::array<bool, 4> visible{true, true, true, false};
  int maxBinDepth = 8;  ///< colour by bin: bins 0..maxBinDepth span the palette
};

/// Headless pictures: PNG frames during the run and/or a screenshot at its end.
struct FrameOptions {
  std::string framesDir;  ///< --frames DIR: frame_000000.png, … ; empty = none
  int every = 1;          ///< --frame-every K: a frame every K steps (and the initial state)
  int width = 1280;       ///< --size WxH [pixels]
  int height = 720;
  std::string screenshotPath;               ///< --screenshot FILE: the final state; empty = none
  ColorBy colorBy = ColorBy::Component;     ///< --color
  bool showHalo = false;                    ///< --show-halo: draw the dark matter too
  OverlayKind overlay = OverlayKind::None;  ///< --overlay
  int overlayMinLevel = 2;                  ///< --overlay-levels A:B (tree cells of levels A..B)
  int overlayMaxLevel = 6;
  std::string videoPath;     ///< --video FILE: the frames (as --frame-every picks them) as a video;
                             ///< empty = none
  std::string ffmpeg;        ///< the ffmpeg found on PATH for --video; empty = none found
  std::int64_t pickId = -1;  ///< --pick ID: draw this particle's walk (app/walk_view.h); -1 = none
  CameraMode camera;         ///< --camera, --auto-frame: what the camera follows
  float dust = 0.0f;  ///< --dust X: extinction strength, 1 = the calibrated disk dust; 0 = off
  float dofAperture = 0.0f;  ///< --dof A: lens diameter / focus distance; 0 = no depth of field
  float dofFocus = 1.0f;     ///< --focus F: focus distance / the camera's target distance

  bool wanted() const {
    return !framesDir.empty() || !screenshotPath.empty() || !videoPath.empty();
  }
};

}  // namespace bhviz::app
