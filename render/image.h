#pragma once
// An 8-bit RGBA image, top row first, and PNG encoding and decoding (stb).

#include <cstdint>
#include <filesystem>
#include <vector>

namespace bhviz::render {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgba;  ///< width × height × 4 bytes, rows from the top

  const std::uint8_t* pixel(int x, int y) const {
    return rgba.data() + 4 * (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                              static_cast<std::size_t>(x));
  }
};

/// The PNG file's bytes (8-bit RGBA). Throws std::runtime_error when encoding fails.
std::vector<std::uint8_t> encodePng(const Image& image);
/// Writes encodePng(image) to `path`. Throws std::runtime_error naming the file.
void writePng(const std::filesystem::path& path, const Image& image);
/// Reads any PNG as 8-bit RGBA. Throws std::runtime_error naming the file and stb's reason.
Image readPng(const std::filesystem::path& path);

}  // namespace bhviz::render
