#include "render/image.h"

#include <fstream>
#include <stdexcept>
#include <string>

// stb is header-only: its implementation lives in this one translation unit. (Debian's
// libstb also ships a libstb.so; it is not linked, so there is one copy.)
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#include <stb_image.h>
#include <stb_image_write.h>

namespace bhviz::render {

namespace {

void appendBytes(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<std::uint8_t>*>(context);
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  out->insert(out->end(), bytes, bytes + size);
}

}  // namespace

std::vector<std::uint8_t> encodePng(const Image& image) {
  const std::size_t expected =
      4u * static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height);
  if (image.width <= 0 || image.height <= 0 || image.rgba.size() != expected) {
    throw std::runtime_error("encodePng: the image is empty or its size does not match");
  }
  std::vector<std::uint8_t> png;
  if (stbi_write_png_to_func(appendBytes, &png, image.width, image.height, 4, image.rgba.data(),
                             image.width * 4) == 0) {
    throw std::runtime_error("encodePng: stb_image_write failed");
  }
  return png;
}

void writePng(const std::filesystem::path& path, const Image& image) {
  const std::vector<std::uint8_t> png = encodePng(image);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

Image readPng(const std::filesystem::path& path) {
  int w = 0, h = 0, channels = 0;
  stbi_uc* data = stbi_load(path.string().c_str(), &w, &h, &channels, 4);
  if (data == nullptr) {
    throw std::runtime_error("cannot read " + path.string() + ": " + stbi_failure_reason());
  }
  Image image;
  image.width = w;
  image.height = h;
  image.rgba.assign(data, data + 4 * static_cast<std::size_t>(w) * static_cast<std::size_t>(h));
  stbi_image_free(data);
  return image;
}

}  // namespace bhviz::render
