// The frame-time split of the interactive app at large N, in a headless EGL context (no window):
// the merger in the app's SimSession on the CUDA backend, one substep per frame, drawn by the app's
// ScenePipeline (as the window draws it): the vertex buffer written through the
// CUDA–GL interop bridge (app::VertexWriter, as the window does) and the frame drawn by
// render::Renderer into an offscreen framebuffer. Per frame:
//   simulation  CUDA events on the backend's stream around Simulation::substep
//   interop     CUDA events around VertexWriter::write (the kernel into the memory the GL shares,
//               or map → kernel → unmap; the path is printed)
//   render      a GL_TIME_ELAPSED query around Renderer::render (particles, bloom, tone mapping)
//   upload path for comparison, not part of the frame: host clock around the fallback's work
//               (download, ParticleView::fill, glNamedBufferSubData, glFinish) into a second
//               renderer's own buffer, so it never touches the buffer that CUDA writes
// The three parts run one after another (each waits for the last), medians after the warm-up.
// Then the frames again in the window's order with nothing timed inside them (the session's
// frame, the write, the render flushed), the host wall a frame, without and with the window's
// overlap (SimSession::setOverlap: the frame's substep left running while the CPU goes on),
// alternated twice. Then the render is taken apart (post-processing alone, bloom, sprites at their
// smallest, the other sprite pass, the sprite pixels as fragments of the raster pass), and both
// buffers are drawn once more and the pictures compared: the interop kernel must draw what the host
// upload draws. Prints a Markdown table, then those details.
//
// With --demo-look, the frame has every render option of issue 16's demo render on (population
// colours, dust extinction, depth of field: --color population --dust 1 --dof 0.05), and the
// breakdown adds the render without the dust, without the depth of field and without both.
//
//   bench_frame --n 1000000,4000000 --frames 30 --warmup 5 --size 1920x1080 [--show-halo]
//               [--sprite-pass compute|raster]   (compute, the app's default) [--demo-look]
//               [--potential on-demand|every]    (on-demand, the window's)
#include <EGL/egl.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/sim_session.h"
#include "app/scene/frames.h"
#include "app/scene/gl_context.h"
#include "app/scene/gl_query.h"
#include "app/scene/particle_view.h"
#include "app/scene/scene_pipeline.h"
#include "bench/bench_cli.h"
#include "bench/frame_bench.h"
#include "render/renderer.h"
#include "sim/cuda/cuda_backend.h"
#include "sim/cuda/cuda_stages.h"
#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"

using namespace bhviz;
using namespace bhviz::bench;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Options {
  std::vector<std::size_t> ns{1000000, 4000000};
  int frames = 30;
  int warmup = 5;
  int width = 1920;
  int height = 1080;
  std::string scenario = "merger";
  std::uint64_t seed = 1;
  render::SpritePass pass = render::SpritePass::Compute;
  bool showHalo = false;  ///< the app hides dark matter by default: then ~5/8 of N are drawn
  bool demoLook = false;  ///< population colours, dust and depth of field on
  int rebuildInterval = sim::kRebuildAuto;  ///< SimParams::rebuildInterval (the app's default)
  std::optional<float> expansionRatio;      ///< SimParams::expansionRatio (default: the app's)
  std::optional<float> expansionBudget;     ///< SimParams::expansionBudget (default: the app's)
  bool potentialEveryStep = false;  ///< every step computes the potentials (else the window's rule)
};

/// The demo look: what bhviz --color population --dust 1 --dof 0.05 draws.
constexpr float kDemoDust = 1.0f;
constexpr float kDemoAperture = 0.05f;

/// Everything of one N; GL objects are destroyed before the context (held by main).
class FrameBench {
 public:
  FrameBench(const Options& o, std::size_t n)
      : m_scene(viewSettings(o)),
        m_target(o.width, o.height),
        m_pass(o.pass),
        m_glTimer(&eglGetProcAddress) {
    // The app's simulation and scene: its session on the CUDA backend, shared steps, θ 0.5,
    // Bonsai MAC, the scenario's softening and dt.
    app::SceneSettings scene;
    scene.scenario = o.scenario;
    scene.n = n;
    scene.seed = o.seed;
    scene.backend = app::BackendChoice::Cuda;
    const sim::ScenarioInfo& info = sim::scenarioInfo(o.scenario);
    sim::SimParams params = sim::defaultSimParams();
    params.softening = info.softening;
    params.dtMax = info.dt;
    params.rebuildInterval = o.rebuildInterval;
    if (o.expansionRatio) params.expansionRatio = *o.expansionRatio;
    if (o.expansionBudget) params.expansionBudget = *o.expansionBudget;
    m_session = std::make_unique<app::SimSession>(scene, params);
    m_session->setPotentialOnDemand(!o.potentialEveryStep);
    m_n = n;
    m_nextSample = app::diagnosticsInterval(n);  // the session sampled at its start
    const sim::DeviceAccess* device = m_session->simulation().backend().deviceAccess();
    if (device == nullptr) throw std::runtime_error("the backend does not run on a device");
    m_stream = static_cast<sim::cuda::Stream>(device->particles().stream);

    m_scene.frame(m_session->initial(), float(o.width) / float(o.height));
    m_drawn = m_scene.framing().visible;
    m_scene.look().spritePass = o.pass;
    if (o.demoLook) {
      app::FrameOptions demo;
      demo.dust = kDemoDust;
      demo.dofAperture = kDemoAperture;
      app::applyLookOptions(m_scene.look(), demo);
    }
    m_reference.setPalette(m_scene.view().palette());
  }

  std::size_t drawn() const { return m_drawn; }
  const sim::StepProfile& lastProfile() const { return m_session->simulation().lastProfile(); }

  FrameSample frame() {
    FrameSample s;
    const Clock::time_point t0 = Clock::now();
    m_cudaTimer.start(m_stream);
    m_session->step();
    m_cudaTimer.stop(m_stream);
    s.sim = m_cudaTimer.elapsedMs();
    s.simStages = m_session->simulation().lastProfile().total();
    s.stages = m_session->simulation().lastProfile().ms;
    s.rebuilt = m_session->simulation().lastRebuilt();
    // As the window: the diagnostics every few seconds, whose potentials the next step computes.
    // Its seconds are the window's frames' (sim, write and render, as s.wall below), not this
    // benchmark's, whose upload-path comparison takes up to a second a frame at 16 M.
    m_windowSeconds += m_lastWall / 1000.0;
    if (m_windowSeconds >= m_nextSample) {
      m_session->sampleDiagnostics(0.0);
      m_nextSample = m_windowSeconds + app::diagnosticsInterval(m_n);
    }

    const Clock::time_point t1 = Clock::now();
    m_cudaTimer.start(m_stream);
    const std::string note = m_scene.writeParticles(m_session->simulation());
    m_cudaTimer.stop(m_stream);
    s.interop = m_cudaTimer.elapsedMs();
    s.interopHost = msSince(t1);
    if (!note.empty()) throw std::runtime_error(note);    // never time the fallback as interop
    if (m_scene.vertexPath().rfind("CUDA-GL", 0) != 0) {  // shared memory, or mapped
      throw std::runtime_error(std::string("the vertex writer used the ") + m_scene.vertexPath());
    }

    m_glTimer.begin();
    m_scene.renderer().render(m_scene.camera(), m_scene.look(), m_target.target());
    m_glTimer.end();
    s.render = m_glTimer.elapsedMs();
    s.wall = msSince(t0);
    m_lastWall = s.wall;

    const Clock::time_point t2 = Clock::now();
    m_scene.view().fill(m_session->simulation().particles(), m_vertices);
    m_reference.setParticles(m_vertices.data(), m_vertices.size());
    m_glTimer.finish();
    s.upload = msSince(t2);
    return s;
  }

  std::string vertexPath() const { return m_scene.vertexPath(); }

  RenderBreakdown renderBreakdown(int reps) {
    RenderBreakdown b;
    render::RenderParams noBloom = m_scene.look();
    noBloom.tone.bloomStrength = 0.0f;
    render::RenderParams small = m_scene.look();
    small.particles.spriteSize = 1e-6f;  // clamped up to minSizePx, dimmed: same vertices
    b.full = timedRender(m_scene.look(), reps);
    b.noBloom = timedRender(noBloom, reps);
    b.smallSprites = timedRender(small, reps);
    render::RenderParams other = m_scene.look();
    other.spritePass = m_pass == render::SpritePass::Compute ? render::SpritePass::Raster
                                                             : render::SpritePass::Compute;
    b.otherPass = timedRender(other, reps);
    const render::RenderParams& look = m_scene.look();
    if (look.extinction.enabled || look.depthOfField.enabled) {
      b.demo = true;
      render::RenderParams noDust = look, noBlur = look, plain = look;
      noDust.extinction.enabled = plain.extinction.enabled = false;
      noBlur.depthOfField.enabled = plain.depthOfField.enabled = false;
      b.noDust = timedRender(noDust, reps);
      b.noBlur = timedRender(noBlur, reps);
      b.plain = timedRender(plain, reps);
      b.steps[1] = profiledRender(noDust, reps);
      b.steps[2] = profiledRender(noBlur, reps);
      b.steps[3] = profiledRender(plain, reps);
    }
    b.steps[0] = profiledRender(m_scene.look(), reps);
    b.passDifference = maxDifference(picture(m_scene.renderer(), m_scene.look()),
                                     picture(m_scene.renderer(), other));
    try {
      b.fragments = fragments(m_scene.look());
    } catch (const render::GlError& e) {
      b.fragmentNote = e.what();
    }
    const std::size_t count = m_scene.renderer().particleCount();
    m_scene.renderer().setParticleCount(0);
    b.postOnly = timedRender(m_scene.look(), reps);
    if (b.fragmentNote.empty()) b.postFragments = fragments(m_scene.look());
    m_scene.renderer().setParticleCount(count);
    return b;
  }

  /// Frames in the window's order with nothing timed inside them (the session's frame of one
  /// substep, the interop write, the render submitted and flushed), `overlap` as the window
  /// sets it (SimSession::setOverlap: the next frame's CPU work runs while the device steps):
  /// the host wall per frame over `frames`, after `warmup` [ms]. No UI: the CPU work a window
  /// adds would overlap too.
  double windowLoopMs(int frames, int warmup, bool overlap) {
    m_session->setOverlap(overlap);
    m_session->setPaused(false);
    app::FrameBudget budget;
    budget.mode = app::FrameBudget::Mode::Substeps;
    budget.substepsPerFrame = 1;
    Clock::time_point t0;
    for (int f = 0; f < warmup + frames; ++f) {
      if (f == warmup) {
        m_session->settle();
        m_glTimer.finish();
        t0 = Clock::now();
      }
      const app::SimSession::Frame frame = m_session->frame(budget, false);
      if (!frame.notice.empty()) throw std::runtime_error(frame.notice);
      const std::string note = m_scene.writeParticles(m_session->simulation());
      if (!note.empty()) throw std::runtime_error(note);
      m_scene.renderer().render(m_scene.camera(), m_scene.look(), m_target.target());
      m_glTimer.flush();  // as the window's swap
    }
    m_session->settle();
    m_glTimer.finish();
    const double ms = msSince(t0) / frames;
    m_session->setOverlap(false);
    return ms;
  }

  /// windowLoopMs without and with the overlap, alternated twice, each from the same kept state
  /// (a restore replays the first run's logged tree choices in the others) [ms].
  std::array<std::vector<double>, 2> windowLoops(int frames, int warmup) {
    m_session->settle();
    const std::unique_ptr<sim::KeptState> start = m_session->simulation().keep();
    std::array<std::vector<double>, 2> ms;
    for (int k = 0; k < 4; ++k) {
      m_session->restore(*start);
      ms[k % 2].push_back(windowLoopMs(frames, warmup, k % 2 == 1));
    }
    return ms;
  }

  /// The window's followed camera (Camera panel: galaxy 1, else the centre; auto-frame) per
  /// frame: the sample selected and gathered on the device, the aim and the glide [ms wall,
  /// median].
  double followMs(int reps) {
    app::CameraMode mode;
    mode.target = app::CameraTarget::Galaxy;
    mode.autoFrame = true;
    app::AimSampler sampler;
    app::CameraFollower follower(false);
    render::Camera camera = m_scene.camera();
    std::vector<double> ms;
    for (int k = 0; k < reps; ++k) {
      const Clock::time_point t0 = Clock::now();
      const app::CameraAim aim =
          sampler.aim(m_session->simulation(), mode, m_scene.view().settings());
      follower.follow(camera, mode, aim, 1.0f / 60.0f, 16.0f / 9.0f);
      ms.push_back(msSince(t0));
      if (!aim.valid) mode.target = app::CameraTarget::Centre;  // a scene of one sphere
    }
    return median(std::move(ms));
  }

  /// Rewind (app/core/rewind.h): keeping the state and going back to it, in device memory and
  /// on the host [ms wall, medians of `reps`]: {keep on the device, restore it, keep on the
  /// host, restore it}.
  std::array<double, 4> rewindMs(int reps) {
    const sim::Simulation& sim = m_session->simulation();
    std::array<std::vector<double>, 4> ms;
    for (int k = 0; k < reps; ++k) {
      for (const std::size_t room : {std::size_t(1) << 40, std::size_t(0)}) {
        const std::size_t at = room > 0 ? 0 : 2;
        Clock::time_point t0 = Clock::now();
        const std::unique_ptr<sim::KeptState> kept = sim.keep(room);
        ms[at].push_back(msSince(t0));
        if (kept->onDevice() != (room > 0)) throw std::runtime_error("kept in the wrong place");
        t0 = Clock::now();
        m_session->restore(*kept);
        ms[at + 1].push_back(msSince(t0));
      }
    }
    return {median(std::move(ms[0])), median(std::move(ms[1])), median(std::move(ms[2])),
            median(std::move(ms[3]))};
  }

  /// Draws the interop buffer and the uploaded one (both hold the last frame's state).
  PictureCheck checkPicture() {
    const render::Image interop = picture(m_scene.renderer(), m_scene.look());
    const render::Image uploaded = picture(m_reference, m_scene.look());
    PictureCheck c;
    std::size_t lit = 0;
    for (std::size_t i = 0; i + 3 < interop.rgba.size(); i += 4) {
      int d = 0, brightest = 0;
      for (std::size_t k = 0; k < 3; ++k) {
        d = std::max(d, std::abs(int(interop.rgba[i + k]) - int(uploaded.rgba[i + k])));
        brightest = std::max(brightest, int(interop.rgba[i + k]));
      }
      c.differing += d > 0 ? 1 : 0;
      c.maxDifference = std::max(c.maxDifference, d);
      lit += brightest >= 16 ? 1 : 0;  // the background is 0, 0, 0.01
    }
    c.lit = double(lit) / double(interop.rgba.size() / 4);
    return c;
  }

 private:
  double timedRender(const render::RenderParams& look, int reps) {
    std::vector<double> ms;
    for (int k = 0; k < reps; ++k) {
      m_glTimer.begin();
      m_scene.renderer().render(m_scene.camera(), look, m_target.target());
      m_glTimer.end();
      ms.push_back(m_glTimer.elapsedMs());
    }
    return median(std::move(ms));
  }

  /// The particle pass's steps [ms, medians of each].
  render::RenderProfile profiledRender(render::RenderParams look, int reps) {
    look.profile = true;
    std::vector<double> dust, integrate, sprites, resolve;
    for (int k = 0; k < reps; ++k) {
      m_scene.renderer().render(m_scene.camera(), look, m_target.target());
      const render::RenderProfile p = m_scene.renderer().lastProfile();
      dust.push_back(p.dustSplat);
      integrate.push_back(p.dustIntegrate);
      sprites.push_back(p.sprites);
      resolve.push_back(p.resolve);
    }
    render::RenderProfile m;
    m.dustSplat = median(std::move(dust));
    m.dustIntegrate = median(std::move(integrate));
    m.sprites = median(std::move(sprites));
    m.resolve = median(std::move(resolve));
    return m;
  }

  render::Image picture(render::Renderer& renderer, const render::RenderParams& look) {
    renderer.render(m_scene.camera(), look, m_target.target());
    return m_target.read();
  }

  static int maxDifference(const render::Image& a, const render::Image& b) {
    int d = 0;
    for (std::size_t i = 0; i < a.rgba.size() && i < b.rgba.size(); ++i) {
      d = std::max(d, std::abs(int(a.rgba[i]) - int(b.rgba[i])));
    }
    return d;
  }

  /// The sprite pixels, counted as the raster pass's fragment shader invocations (the compute
  /// splat does the same pixels as atomics and shades no fragment).
  std::uint64_t fragments(render::RenderParams look) {
    look.spritePass = render::SpritePass::Raster;
    app::GlQuery count(&eglGetProcAddress, app::GlQuery::Kind::FragmentShaderInvocations);
    count.begin();
    m_scene.renderer().render(m_scene.camera(), look, m_target.target());
    count.end();
    return count.result();
  }

  static app::ViewSettings viewSettings(const Options& o) {
    app::ViewSettings v;
    v.visible[static_cast<std::size_t>(sim::Component::Halo)] = o.showHalo;
    if (o.demoLook) v.colorBy = app::ColorBy::Population;
    return v;
  }

  app::ScenePipeline m_scene;  // its renderer is written through interop, drawn every frame
  std::unique_ptr<app::SimSession> m_session;
  std::size_t m_n = 0;
  // The window's clock: the frames' own wall time summed, and when its next sample falls due.
  double m_windowSeconds = 0.0, m_nextSample = 0.0, m_lastWall = 0.0;
  sim::cuda::Stream m_stream = nullptr;
  render::Renderer m_reference;  // written by the upload path
  render::OffscreenTarget m_target;
  render::SpritePass m_pass;
  sim::cuda::EventTimer m_cudaTimer;
  app::GlQuery m_glTimer;
  std::vector<render::ParticleVertex> m_vertices;
  std::size_t m_drawn = 0;
};

Row measure(const Options& o, std::size_t n) {
  FrameBench bench(o, n);
  Row r;
  r.n = n;
  r.drawn = bench.drawn();
  for (int f = 0; f < o.warmup + o.frames; ++f) {
    const FrameSample s = bench.frame();
    if (f >= o.warmup) r.samples.push_back(s);
  }
  r.vertexPath = bench.vertexPath();
  r.render = bench.renderBreakdown(11);
  r.follow = bench.followMs(11);
  r.rewind = bench.rewindMs(5);
  r.picture = bench.checkPicture();
  const sim::StepProfile& p = bench.lastProfile();
  std::fprintf(stderr, "  N = %zu: last substep walk %.2f ms, %.0f interactions/particle\n", n,
               p[sim::Stage::Walk],
               double(p.interactions.cell + p.interactions.particle) /
                   double(std::max<std::uint64_t>(1, p.interactions.targets)));
  r.windowLoop = bench.windowLoops(o.frames, 3);  // last: it moves the simulation on
  return r;
}

std::vector<std::size_t> parseCounts(const std::string& text) {
  std::vector<std::size_t> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) {
    std::size_t used = 0;
    const unsigned long long v = std::stoull(item, &used);
    if (used != item.size() || v == 0) throw std::invalid_argument(item);
    out.push_back(static_cast<std::size_t>(v));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"bhviz frame benchmark: simulation, vertex write (interop / upload), render"};
  Options o;
  std::string ns = "1000000,4000000", size = "1920x1080";
  cli.add_option("--n", ns, "comma-separated particle counts");
  cli.add_option("--frames", o.frames, "timed frames (median)")->check(CLI::Range(1, 100000));
  cli.add_option("--warmup", o.warmup, "frames before timing")->check(CLI::Range(0, 100000));
  cli.add_option("--size", size, "picture size WxH");
  cli.add_option("--scenario", o.scenario, "a built-in scenario");
  cli.add_option("--seed", o.seed, "initial-condition seed");
  cli.add_flag("--show-halo", o.showHalo, "draw the dark matter too (the app hides it)");
  cli.add_flag("--demo-look", o.demoLook,
               "every demo render option on: population colours, dust (--dust 1), depth of "
               "field (--dof 0.05)");
  std::string pass = "compute", rebuild = "auto";
  cli.add_option("--rebuild", rebuild, "tree rebuilds: auto (the app's default), every or K");
  cli.add_option_function<float>(
      "--expansion-ratio", [&](const float& v) { o.expansionRatio = v; },
      "the far cells' expansion (default: the app's)");
  cli.add_option_function<float>(
      "--expansion-budget", [&](const float& v) { o.expansionBudget = v; },
      "the far cells' expansion by mass (0: by distance alone; default: the app's)");
  cli.add_option("--sprite-pass", pass, "compute (the app's default) or raster")
      ->check(CLI::IsMember({"compute", "raster"}));
  std::string potential = "on-demand";
  cli.add_option("--potential", potential,
                 "on-demand (the window's: only for the diagnostics every few seconds) or every "
                 "(every step)")
      ->check(CLI::IsMember({"on-demand", "every"}));
  if (const auto status = bhviz::bench::parseOrExit(cli, argc, argv)) return *status;
  o.potentialEveryStep = potential == "every";
  try {
    o.ns = parseCounts(ns);
    o.pass = pass == "raster" ? render::SpritePass::Raster : render::SpritePass::Compute;
    const std::optional<int> interval = sim::parseRebuildInterval(rebuild);
    if (!interval) throw std::invalid_argument("--rebuild " + rebuild);
    o.rebuildInterval = *interval;
    if (std::sscanf(size.c_str(), "%dx%d", &o.width, &o.height) != 2 || o.width < 16 ||
        o.height < 16 || o.width > 8192 || o.height > 8192) {
      throw std::invalid_argument("--size " + size);
    }
    sim::SimParams p = sim::defaultSimParams();  // the scenario and parameters, before the device
    if (o.expansionRatio) p.expansionRatio = *o.expansionRatio;
    if (o.expansionBudget) p.expansionBudget = *o.expansionBudget;
    if (const auto bad = bhviz::bench::invalidRun(p, o.scenario, o.ns.front())) {
      throw std::invalid_argument(*bad);
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_frame: bad argument: " << e.what() << "\n";
    return 2;
  }

  try {
    const std::unique_ptr<app::HeadlessGlContext> context = app::HeadlessGlContext::create();
    std::printf("device: %s\nGL: %s\n", sim::cuda::deviceDescription().c_str(),
                context->description().c_str());
    std::printf(
        "scenario %s, %dx%d, %s, %s, sprites by the %s pass, potentials %s, %d frames after "
        "%d warm-up, medians\n\n",
        o.scenario.c_str(), o.width, o.height,
        o.showHalo ? "every particle drawn" : "dark matter hidden (the app's default)",
        o.demoLook ? "demo look (population colours, dust, depth of field)" : "plain look",
        o.pass == render::SpritePass::Compute ? "compute" : "raster",
        o.potentialEveryStep ? "every step" : "on demand (the window's)", o.frames, o.warmup);
    std::vector<Row> rows;
    for (std::size_t n : o.ns) rows.push_back(measure(o, n));
    printTable(rows);
    for (const Row& r : rows) {
      if (r.picture.differing > 0) {
        std::fprintf(
            stderr, "bench_frame: at N = %zu the interop picture differs from the upload's\n", r.n);
        return 1;
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_frame: " << e.what() << "\n";
    return 1;
  }
}
