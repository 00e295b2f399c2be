#pragma once
// Helpers of the render tests: image statistics computed from the pixels, temporary folders,
// and the bhviz executable as a subprocess.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "process_support.h"
#include "render/image.h"

namespace bhviz::test {

namespace fs = std::filesystem;

/// Statistics of an image, from its pixels.
struct ImageStats {
  double litFraction = 0.0;        ///< luminance > 0.08
  double saturatedFraction = 0.0;  ///< every channel ≥ 250
  double meanLuminance = 0.0;      ///< [0, 1]
  double brightestX = 0.0;         ///< centre of the brightest grid cell [pixels]
  double brightestY = 0.0;
  std::array<double, 12>
      hue{};  ///< histogram of hue (30° bins) over lit, coloured pixels, sums to 1
};

/// BHVIZ_NO_GL=1: the GL tests skip on request (a machine with no EGL at all).
inline bool glDisabled() {
  const char* v = std::getenv("BHVIZ_NO_GL");
  return v != nullptr && std::string(v) == "1";
}

inline double luminance(const std::uint8_t* px) {
  return (0.2126 * px[0] + 0.7152 * px[1] + 0.0722 * px[2]) / 255.0;
}

inline ImageStats imageStats(const render::Image& img) {
  ImageStats s;
  const int cell = std::max(4, std::min(img.width, img.height) / 16);
  const int gx = (img.width + cell - 1) / cell, gy = (img.height + cell - 1) / cell;
  std::vector<double> grid(static_cast<std::size_t>(gx * gy), 0.0);
  double hueCount = 0.0;
  const double pixels = double(img.width) * img.height;
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) {
      const std::uint8_t* px = img.pixel(x, y);
      const double l = luminance(px);
      s.meanLuminance += l / pixels;
      grid[static_cast<std::size_t>((y / cell) * gx + x / cell)] += l;
      if (l > 0.08) s.litFraction += 1.0 / pixels;
      if (px[0] >= 250 && px[1] >= 250 && px[2] >= 250) s.saturatedFraction += 1.0 / pixels;
      const double r = px[0] / 255.0, g = px[1] / 255.0, b = px[2] / 255.0;
      const double mx = std::max({r, g, b}), mn = std::min({r, g, b});
      if (l > 0.08 && mx - mn > 0.06) {
        double h;  // hue in [0, 6)
        if (mx == r)
          h = std::fmod((g - b) / (mx - mn) + 6.0, 6.0);
        else if (mx == g)
          h = (b - r) / (mx - mn) + 2.0;
        else
          h = (r - g) / (mx - mn) + 4.0;
        s.hue[std::min<std::size_t>(11, static_cast<std::size_t>(h * 2.0))] += 1.0;
        hueCount += 1.0;
      }
    }
  }
  if (hueCount > 0.0) {
    for (double& h : s.hue) h /= hueCount;
  }
  const auto best = std::max_element(grid.begin(), grid.end()) - grid.begin();
  s.brightestX = (double(best % gx) + 0.5) * cell;
  s.brightestY = (double(best / gx) + 0.5) * cell;
  return s;
}

/// Half the L1 distance of two hue histograms: 0 = same hues, 1 = no hue in common.
inline double hueDistance(const ImageStats& a, const ImageStats& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.hue.size(); ++i) d += std::abs(a.hue[i] - b.hue[i]);
  return 0.5 * d;
}

/// Share of pixels where some channel differs by more than `tolerance`.
inline double changedFraction(const render::Image& a, const render::Image& b, int tolerance = 24) {
  std::size_t changed = 0;
  for (std::size_t i = 0; i + 3 < a.rgba.size(); i += 4) {
    for (int c = 0; c < 3; ++c) {
      if (std::abs(int(a.rgba[i + c]) - int(b.rgba[i + c])) > tolerance) {
        ++changed;
        break;
      }
    }
  }
  return double(changed) / (double(a.rgba.size()) / 4.0);
}

}  // namespace bhviz::test
