#pragma once
// Pixels of the walk overlay's three colours (app/walk_view.h) in a picture, shared by the
// headless and window tests of "see the walk".

#include <cstddef>

#include "render/image.h"

namespace bhviz::test {

/// Pixels whose hue is clearly that of one verdict: green (accepted), orange (leaf, P2P), blue
/// (opened). The particles of a Plummer sphere in component colours are near grey, so a plain
/// picture has few of these.
struct WalkPixels {
  std::size_t accepted = 0, leaf = 0, opened = 0;
};

inline WalkPixels walkPixels(const render::Image& img) {
  WalkPixels n;
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) {
      const std::uint8_t* p = img.pixel(x, y);
      const int r = p[0], g = p[1], b = p[2];
      n.accepted += g > 120 && g > r + 50 && g > b + 50;
      n.leaf += r > 150 && r > g + 50 && g > b + 30;
      n.opened += b > 150 && b > r + 50 && b > g + 30;
    }
  }
  return n;
}

}  // namespace bhviz::test
