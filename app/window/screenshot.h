#pragma once
// Screenshots of the window's scene (without the panels), through the offscreen target and the
// PNG writer that headless pictures use.

#include <filesystem>
#include <string>

#include "render/camera.h"
#include "render/renderer.h"

namespace bhviz::app {

/// Renders the scene offscreen at width × height and writes it as a PNG (atomically). Throws
/// render::GlError or std::runtime_error naming the file.
void saveScreenshot(render::Renderer& renderer, const render::Camera& camera,
                    const render::RenderParams& params, int width, int height,
                    const std::filesystem::path& path);

/// "bhviz-20250114-153012.png" in `dir`, from the local time; "-2", "-3", … when taken.
std::filesystem::path timestampedScreenshotPath(const std::filesystem::path& dir);

}  // namespace bhviz::app
