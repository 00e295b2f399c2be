// bench_frame's report: the Markdown table of the frames, then each N's details (frame_bench.h).
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include "bench/frame_bench.h"

namespace bhviz::bench {

std::string millions(std::size_t n) {
  std::ostringstream s;
  s << double(n) / 1e6 << " M";
  return s.str();
}

void printTable(const std::vector<Row>& rows) {
  std::printf(
      "| N | drawn | sim ms | interop write ms | upload-path write ms | render ms | frame total ms "
      "|\n"
      "|---|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const auto& s = r.samples;
    std::printf("| %s | %s | %.2f | %.3f | %.1f | %.3f | **%.2f** |\n", millions(r.n).c_str(),
                millions(r.drawn).c_str(), medianOf(s, [](auto& x) { return x.sim; }),
                medianOf(s, [](auto& x) { return x.interop; }),
                medianOf(s, [](auto& x) { return x.upload; }),
                medianOf(s, [](auto& x) { return x.render; }),
                medianOf(s, [](auto& x) { return x.total(); }));
  }
  std::printf("\n");
  for (const Row& r : rows) {
    const auto& s = r.samples;
    std::vector<double> render;
    for (const FrameSample& x : s) render.push_back(x.render);
    std::printf(
        "%s: sim stage sum %.2f ms; interop (%s) host wall %.3f ms; frame host wall %.2f ms; "
        "render min %.3f / max %.3f ms; interop picture vs upload: %zu pixels differ (max %d); "
        "lit %.1f %%\n",
        millions(r.n).c_str(), medianOf(s, [](auto& x) { return x.simStages; }),
        r.vertexPath.c_str(), medianOf(s, [](auto& x) { return x.interopHost; }),
        medianOf(s, [](auto& x) { return x.wall; }),
        *std::min_element(render.begin(), render.end()),
        *std::max_element(render.begin(), render.end()), r.picture.differing,
        r.picture.maxDifference, 100.0 * r.picture.lit);
    std::printf("%s: sim by stage (medians, ms):", millions(r.n).c_str());
    for (int j = 0; j < static_cast<int>(sim::Stage::Count); ++j) {
      std::printf(" %s %.3f", std::string(sim::kStageNames[j]).c_str(),
                  medianOf(s, [j](auto& x) { return x.stages[j]; }));
    }
    const auto rebuilt = std::count_if(s.begin(), s.end(), [](auto& x) { return x.rebuilt; });
    std::printf("; the tree rebuilt in %td of %zu frames\n", rebuilt, s.size());
    std::printf("%s: the followed, auto-framed camera (sample, aim, glide) %.3f ms\n",
                millions(r.n).c_str(), r.follow);
    const auto runs = [](const std::vector<double>& v) {
      std::string out;
      for (const double x : v) {
        char ms[32];
        std::snprintf(ms, sizeof ms, "%.3f", x);
        out += (out.empty() ? "" : " / ") + std::string(ms);
      }
      return out;
    };
    std::printf(
        "%s: the window's loop (frame, write, render; host wall a frame): %s ms, with the "
        "overlap %s ms\n",
        millions(r.n).c_str(), runs(r.windowLoop[0]).c_str(), runs(r.windowLoop[1]).c_str());
    std::printf(
        "%s: rewind: keep %.3f / restore %.3f ms on the GPU, keep %.3f / restore %.3f ms "
        "on the host\n",
        millions(r.n).c_str(), r.rewind[0], r.rewind[1], r.rewind[2], r.rewind[3]);
  }
  for (const Row& r : rows) {
    const RenderBreakdown& b = r.render;
    std::printf(
        "%s render: %.3f ms = particles %.3f + clear, bloom and tone mapping %.3f (bloom %.3f); "
        "every sprite at 1.5 px: %.3f ms; the other sprite pass: %.3f ms (pictures differ by at "
        "most %d levels)",
        millions(r.n).c_str(), b.full, b.full - b.postOnly, b.postOnly, b.full - b.noBloom,
        b.smallSprites, b.otherPass, b.passDifference);
    if (b.demo) {
      std::printf(
          "; demo look (population colours, dust, depth of field): without dust %.3f ms, "
          "without depth of field %.3f ms, without both %.3f ms: dust + depth of field cost "
          "%.3f ms (dust %.3f, depth of field %.3f)",
          b.noDust, b.noBlur, b.plain, b.full - b.plain, b.full - b.noDust, b.full - b.noBlur);
    }
    if (b.fragmentNote.empty()) {
      const double particleFragments = double(b.fragments) - double(b.postFragments);
      std::printf("; sprite pixels %.3g (%.1f per drawn particle, %.3g per s)\n", particleFragments,
                  particleFragments / double(std::max<std::size_t>(1, r.drawn)),
                  particleFragments / ((b.full - b.postOnly) * 1e-3));
    } else {
      std::printf("; fragments unknown: %s\n", b.fragmentNote.c_str());
    }
    const char* names[4] = {"as drawn", "without dust", "without depth of field", "without both"};
    for (int k = 0; k < (b.demo ? 4 : 1); ++k) {
      const render::RenderProfile& p = b.steps[k];
      std::printf(
          "%s steps, %s: dust splat %.3f, dust integrate %.3f, sprites %.3f, resolve %.3f ms\n",
          millions(r.n).c_str(), names[k], p.dustSplat, p.dustIntegrate, p.sprites, p.resolve);
    }
  }
}

}  // namespace bhviz::bench
