#include <algorithm>
#include <cstddef>
#include <vector>

#include "render/gl_util.h"
#include "render/renderer.h"

namespace bhviz::render {

Image readTarget(const RenderTarget& target) {
  Image image;
  image.width = std::max(target.width, 0);
  image.height = std::max(target.height, 0);
  const std::size_t row = 4u * static_cast<std::size_t>(image.width);
  std::vector<std::uint8_t> bottomUp(row * static_cast<std::size_t>(image.height));
  glBindFramebuffer(GL_READ_FRAMEBUFFER, target.framebuffer);
  if (target.framebuffer == 0) glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, image.width, image.height, GL_RGBA, GL_UNSIGNED_BYTE, bottomUp.data());
  gl::check("reading the framebuffer back");
  image.rgba.resize(bottomUp.size());
  for (int y = 0; y < image.height; ++y) {
    const std::size_t src = row * static_cast<std::size_t>(image.height - 1 - y);
    std::copy_n(bottomUp.data() + src, row, image.rgba.data() + row * static_cast<std::size_t>(y));
  }
  return image;
}

}  // namespace bhviz::render
