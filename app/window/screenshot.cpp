#include "app/window/screenshot.h"

#include <chrono>
#include <ctime>
#include <ostream>

#include "app/scene/frames.h"
#include "render/image.h"

namespace bhviz::app {

void saveScreenshot(render::Renderer& renderer, const render::Camera& camera,
                    const render::RenderParams& params, int width, int height,
                    const std::filesystem::path& path) {
  render::OffscreenTarget target(width, height);
  renderer.render(camera, params, target.target());
  writePngAtomically(path, target.read());
}

std::filesystem::path timestampedScreenshotPath(const std::filesystem::path& dir) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  const std::string base = std::string("bhviz-") + stamp;
  std::filesystem::path path = dir / (base + ".png");
  std::error_code ec;
  for (int k = 2; std::filesystem::exists(path, ec); ++k) {
    path = dir / (base + "-" + std::to_string(k) + ".png");
  }
  return path;
}

}  // namespace bhviz::app
