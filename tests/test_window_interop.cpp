// CUDA–GL interop (label gpu): the CUDA backend's particles written into the renderer's vertex
// buffer by the bridge's kernel must draw exactly the picture the host upload draws. Runs on
// the GPU server through the headless EGL device context (no window, no display there); skips
// without a CUDA device.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "app/frames.h"
#include "app/gl_context.h"
#include "app/particle_view.h"
#include "app/vertex_writer.h"
#include "render/renderer.h"
#include "sim/cuda/cuda_backend.h"
#include "sim/cuda/device_buffer.h"
#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"

namespace {

using namespace bhviz;

struct Scene {
  std::unique_ptr<app::HeadlessGlContext> context;
  std::unique_ptr<render::Renderer> renderer;
  std::unique_ptr<render::OffscreenTarget> target;
  render::Camera camera;
  render::RenderParams params = app::sceneRenderParams();

  ~Scene() {  // GL objects before the context
    target.reset();
    renderer.reset();
  }
  render::Image draw() {
    renderer->render(camera, params, target->target());
    return target->read();
  }
};

TEST(WindowInterop, KernelWritesWhatTheUploadWrites) {
  if (sim::cuda::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  Scene scene;
  scene.context = app::HeadlessGlContext::create();
  std::printf("GL: %s\n", scene.context->description().c_str());
  scene.renderer = std::make_unique<render::Renderer>();
  scene.target = std::make_unique<render::OffscreenTarget>(320, 240);

  const sim::Particles initial = sim::makeScenario("merger", 20000, 5);
  sim::SimParams params;
  params.softening = 0.05f;
  params.dtMax = 1.0f / 64.0f;
  sim::Simulation sim(sim::cuda::makeCudaBackend(initial.size()), initial, params);
  sim.advance(2);

  for (app::ColorBy colour : {app::ColorBy::Component, app::ColorBy::Speed, app::ColorBy::Bin}) {
    app::ViewSettings settings;
    settings.colorBy = colour;
    app::ParticleView view(settings);
    view.calibrate(initial);
    const app::Framing framing = app::frameVisible(initial, settings);
    app::aimCamera(scene.camera, framing, 320.0f / 240.0f);
    scene.params.particles = app::particleStyleFor(framing.visible, framing.radius);
    scene.renderer->setPalette(view.palette());

    std::vector<render::ParticleVertex> host;
    view.fill(sim.particles(), host);
    scene.renderer->setParticles(host.data(), host.size());
    const render::Image uploaded = scene.draw();

    app::VertexWriter writer;
    // Twice, and again after the buffer was reallocated (a new generation to register).
    for (int pass = 0; pass < 3; ++pass) {
      if (pass == 2) scene.renderer->reserveParticles(2 * scene.renderer->particleBuffer().capacity);
      const std::string note = writer.write(sim, view, *scene.renderer);
      ASSERT_TRUE(note.empty()) << note;
      ASSERT_STREQ(writer.path(), "CUDA-GL interop");
      EXPECT_EQ(scene.renderer->particleCount(), initial.size());
      const render::Image interop = scene.draw();
      EXPECT_EQ(interop.rgba, uploaded.rgba) << "colour " << app::toString(colour) << ", pass " << pass;
    }
  }
}

TEST(WindowInterop, WriteTimeAtOneMillionParticles) {
  if (sim::cuda::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  Scene scene;
  scene.context = app::HeadlessGlContext::create();
  scene.renderer = std::make_unique<render::Renderer>();
  const sim::Particles initial = sim::makeScenario("plummer", 1000000, 1);
  sim::Simulation sim(sim::cuda::makeCudaBackend(initial.size()), initial, sim::SimParams{});
  app::ParticleView view(app::ViewSettings{});
  view.calibrate(initial);
  app::VertexWriter writer;
  ASSERT_TRUE(writer.write(sim, view, *scene.renderer).empty());  // registers
  sim::cuda::synchronize(nullptr);
  const int kWrites = 50;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kWrites; ++i) writer.write(sim, view, *scene.renderer);
  sim::cuda::synchronize(nullptr);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("interop write of 1M vertices: %.3f ms (map + kernel + unmap, mean of %d)\n",
              ms / kWrites, kWrites);
  EXPECT_STREQ(writer.path(), "CUDA-GL interop");
}

}  // namespace
