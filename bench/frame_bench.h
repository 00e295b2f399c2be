#pragma once
// What bench_frame measures and reports (bench_frame.cpp runs the frames; frame_report.cpp prints
// them): one frame's times, the render taken apart, the interop picture's check, one N's row.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "render/renderer.h"
#include "sim/profile.h"

namespace bhviz::bench {

/// One frame's times [ms].
struct FrameSample {
  double sim = 0;          ///< the substep, device span on the backend's stream
  double simStages = 0;    ///< the substep's StepProfile total (sum of its stage events)
  double interop = 0;      ///< the vertex write (kernel, or map → kernel → unmap), device span
  double interopHost = 0;  ///< the same, host wall time of the call (and the event wait)
  double render = 0;       ///< GL device time of Renderer::render
  double wall = 0;         ///< host wall time of sim + interop + render
  double upload = 0;       ///< the upload path's write, host wall time until the GL finished it
  std::array<double, static_cast<int>(sim::Stage::Count)> stages{};  ///< the substep's, by stage
  bool rebuilt = false;  ///< the substep rebuilt the tree (else refitted it)
  double total() const { return sim + interop + render; }
};

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

template <typename F>
double medianOf(const std::vector<FrameSample>& s, F field) {
  std::vector<double> v;
  v.reserve(s.size());
  for (const FrameSample& x : s) v.push_back(field(x));
  return median(std::move(v));
}

/// The interop picture against the upload picture.
struct PictureCheck {
  std::size_t differing = 0;  ///< pixels that differ
  int maxDifference = 0;      ///< largest channel difference [0, 255]
  double lit = 0;             ///< share of pixels brighter than the background
};

/// Renderer::render taken apart [ms, medians of a few draws of the last frame's state].
struct RenderBreakdown {
  double full = 0;                  ///< as in the table
  double noBloom = 0;               ///< bloom strength 0: the bloom passes are skipped
  double postOnly = 0;              ///< no particle drawn: clear, bloom and tone mapping alone
  double smallSprites = 0;          ///< every sprite at the 1.5 px minimum: the per-vertex cost
  double otherPass = 0;             ///< the same frame with the other sprite pass
  int passDifference = 0;           ///< largest channel difference of the two passes' pictures
  std::uint64_t fragments = 0;      ///< fragment shader invocations of the full raster render
  std::uint64_t postFragments = 0;  ///< the same without particles
  std::string fragmentNote;         ///< why the fragments are unknown, else empty
  bool demo = false;                ///< the demo look's options (--demo-look) are on in `full`
  double noDust = 0;                ///< demo look without the extinction
  double noBlur = 0;                ///< demo look without the depth of field
  double plain = 0;                 ///< neither: the cost of both is full − plain
  /// The particle pass's steps (RenderParams::profile) of `full`, and with the demo look of
  /// noDust, noBlur and plain.
  render::RenderProfile steps[4];
};

struct Row {
  std::size_t n = 0;
  std::size_t drawn = 0;
  std::vector<FrameSample> samples;
  PictureCheck picture;
  std::string vertexPath;  ///< VertexWriter::path of the frames
  RenderBreakdown render;
  double follow = 0;               ///< FrameBench::followMs
  std::array<double, 4> rewind{};  ///< FrameBench::rewindMs
  /// FrameBench::windowLoopMs without [0] and with [1] the overlap, one entry per run [ms]
  std::array<std::vector<double>, 2> windowLoop;
};

/// "1 M" for 1000000.
std::string millions(std::size_t n);

/// The Markdown table of the rows, then each row's details (stdout).
void printTable(const std::vector<Row>& rows);

}  // namespace bhviz::bench
