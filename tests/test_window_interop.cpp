// CUDA–GL interop (label gpu): the CUDA backend's particles written into the renderer's vertex
// buffer by the bridge's kernel, through the memory the GL shares or through a mapped buffer,
// must draw exactly the picture the host upload draws, and so must the tree overlay made on the
// device. Runs on
// the GPU server through the headless EGL device context (no window, no display there); skips
// without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "app/bridge/cuda_gl_bridge.h"
#include "app/scene/frames.h"
#include "app/scene/gl_context.h"
#include "app/scene/overlay_view.h"
#include "app/scene/overlay_writer.h"
#include "app/scene/particle_view.h"
#include "app/scene/vertex_writer.h"
#include "render/renderer.h"
#include "sim/cpu/cpu_backend.h"
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
  /// A headless GL context, a renderer and an offscreen target of width × height.
  void open(int width, int height) {
    context = app::HeadlessGlContext::create();
    renderer = std::make_unique<render::Renderer>();
    target = std::make_unique<render::OffscreenTarget>(width, height);
  }
  render::Image draw() {
    renderer->render(camera, params, target->target());
    return target->read();
  }
};

/// Whether the current GL runs on CUDA's device, so that the writer can draw from CUDA's memory.
bool glSharesCudaMemory() { return app::CudaGlBridge::hasCurrentDevice(render::glDeviceUuids()); }

TEST(WindowInterop, KernelWritesWhatTheUploadWrites) {
  if (sim::cuda::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  Scene scene;
  scene.open(320, 240);
  std::printf("GL: %s\n", scene.context->description().c_str());

  const sim::Particles initial = sim::makeScenario("merger", 20000, 5);
  sim::SimParams params;
  params.softening = 0.05f;
  params.dtMax = 1.0f / 64.0f;
  sim::Simulation sim(sim::cuda::makeCudaBackend(initial.size()), initial, params);
  sim.advance(2);

  // Colour by force error: measured errors for most ids, unmeasured (NaN) ones, and ids beyond
  // the vector (the last 100), all of which the kernel must colour as the upload does.
  auto errors = std::make_shared<std::vector<float>>(initial.size() - 100);
  for (std::size_t k = 0; k < errors->size(); ++k) {
    (*errors)[k] = k % 7 == 0 ? NAN : std::pow(10.0f, -6.0f + 5.0f * float(k % 101) / 100.0f);
  }
  // Population colours with the disk's dust (the demo render): the ids' hashes on the device
  // must pick the populations and the dust carriers the host picks, and the dust pass draws both.
  for (app::ColorBy colour : {app::ColorBy::Component, app::ColorBy::Speed, app::ColorBy::Bin,
                              app::ColorBy::ForceError, app::ColorBy::Population}) {
    app::ViewSettings settings;
    settings.colorBy = colour;
    app::ParticleView view(settings);
    view.calibrate(initial);
    view.setErrors(errors);
    const bool demo = colour == app::ColorBy::Population;
    view.setDust(demo);
    scene.params.extinction.enabled = demo;
    scene.params.depthOfField.enabled = demo;
    const app::Framing framing = app::frameVisible(initial, settings);
    app::aimCamera(scene.camera, framing, 320.0f / 240.0f);
    scene.params.particles = app::particleStyleFor(framing.visible, framing.radius);
    scene.renderer->setPalette(view.palette());

    std::vector<render::ParticleVertex> host;
    view.fill(sim.particles(), host);
    scene.renderer->setParticles(host.data(), host.size());
    const render::Image uploaded = scene.draw();

    // The shared memory where this GL offers it on CUDA's device, and the mapped buffer. The
    // upload above took the renderer's buffer back from the last writer, and the growth below
    // takes it again: each time the shared writer must import its memory anew (after the growth,
    // more than a 2 MiB allocation granule of it: new device memory).
    const bool canShare = glSharesCudaMemory();
    if (!canShare) std::printf("this GL cannot import CUDA's memory: the mapped buffer only\n");
    for (const bool shared : {true, false}) {
      app::VertexWriter writer(shared);
      const std::string path = shared && canShare ? "CUDA-GL shared memory" : "CUDA-GL interop";
      // Twice, and again after the buffer was reallocated (a new generation to register).
      for (int pass = 0; pass < 3; ++pass) {
        if (pass == 2) {
          scene.renderer->reserveParticles(
              std::max<std::size_t>(2 * scene.renderer->particleBuffer().capacity, 200000));
        }
        const std::string note = writer.write(sim, view, *scene.renderer);
        ASSERT_TRUE(note.empty()) << note;
        ASSERT_EQ(writer.path(), path);
        EXPECT_EQ(scene.renderer->particleMemoryImported(), path == "CUDA-GL shared memory");
        EXPECT_EQ(scene.renderer->particleCount(), initial.size());
        const render::Image interop = scene.draw();
        EXPECT_EQ(interop.rgba, uploaded.rgba)
            << "colour " << app::toString(colour) << ", " << path << ", pass " << pass;
      }
      // The upload after the writer's frames: the buffer's own storage again, drawn as before.
      scene.renderer->setParticles(host.data(), host.size());
      EXPECT_FALSE(scene.renderer->particleMemoryImported());
      EXPECT_EQ(scene.draw().rgba, uploaded.rgba) << "the upload after " << path;
    }
    app::VertexWriter writer;
    if (colour == app::ColorBy::ForceError) {
      // New errors (the meter's next measurement) reach the device copy.
      auto next = std::make_shared<std::vector<float>>(*errors);
      std::reverse(next->begin(), next->end());
      view.setErrors(next);
      view.fill(sim.particles(), host);
      scene.renderer->setParticles(host.data(), host.size());
      const render::Image uploadedNext = scene.draw();
      EXPECT_NE(uploadedNext.rgba, uploaded.rgba) << "the new errors must change the picture";
      ASSERT_TRUE(writer.write(sim, view, *scene.renderer).empty());
      ASSERT_EQ(writer.path().rfind("CUDA-GL", 0), 0u) << writer.path();
      EXPECT_EQ(scene.draw().rgba, uploadedNext.rgba);
    }
  }
}

// The tree overlay made on the device equals the one the CPU backend makes from its own tree of
// the same state: box for box from the kernels, pixel for pixel through interop.
TEST(WindowInterop, DeviceOverlayIsTheCpuOverlay) {
  if (sim::cuda::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  Scene scene;
  scene.open(320, 240);

  const sim::Particles initial = sim::makeScenario("merger", 20000, 5);
  sim::SimParams params;  // the trees are built in the constructors' force evaluation
  sim::Simulation cpu(std::make_unique<sim::CpuBackend>(), initial, params);
  sim::Simulation gpu(sim::cuda::makeCudaBackend(initial.size()), initial, params);
  const auto* cpuBackend = dynamic_cast<const sim::CpuBackend*>(&cpu.backend());
  ASSERT_NE(cpuBackend, nullptr);

  app::OverlayRequest request;
  request.cells = true;
  request.minLevel = 1;
  request.maxLevel = sim::kMaxLevel;  // deeper than the tree: clamped alike
  request.groups = true;
  // Each backend's export, on the host: the CPU's from its tree, the GPU's written by its
  // kernels and copied back.
  const std::vector<render::OverlayBox> expected = app::overlayBoxes(cpu.backend(), request);
  const std::vector<render::OverlayBox> device = app::overlayBoxes(gpu.backend(), request);
  ASSERT_EQ(device.size(), expected.size());
  // Same arithmetic, but the device may fuse a multiply-add (one rounding less) in
  // origin + side · index: a few ulps of the frame's coordinates.
  const sim::KeyFrame& frame = cpuBackend->tree().frame;
  const float tolerance =
      1e-6f *
      (std::max({std::abs(frame.origin.x), std::abs(frame.origin.y), std::abs(frame.origin.z)}) +
       frame.side);
  std::size_t cells = 0;
  for (std::size_t i = 0; i < device.size(); ++i) {
    const render::OverlayBox& a = device[i];
    const render::OverlayBox& b = expected[i];
    for (int k = 0; k < 3; ++k) {
      ASSERT_NEAR(a.centre[k], b.centre[k], tolerance) << "box " << i;
      ASSERT_NEAR(a.halfSize[k], b.halfSize[k], tolerance) << "box " << i;
    }
    ASSERT_EQ(a.colour, b.colour) << "box " << i;
    cells += a.colour.a == app::kCellOpacity ? 1 : 0;
  }
  std::printf("overlay: %zu cells and %zu groups, the same on the device\n", cells,
              device.size() - cells);

  // Drawn: the CPU's boxes uploaded, then the device's written through interop.
  scene.camera.frameSphere({0, 0, 0}, 3.0f, 320.0f / 240.0f);
  scene.renderer->setBoxes(expected.data(), expected.size());
  const render::Image uploaded = scene.draw();
  app::OverlayWriter writer;
  ASSERT_TRUE(writer.write(gpu, request, *scene.renderer).empty());
  EXPECT_STREQ(writer.path(), "GPU, CUDA-GL interop");
  EXPECT_EQ(scene.renderer->boxCount(), expected.size());
  const render::Image interop = scene.draw();
  std::size_t differing = 0;
  for (std::size_t i = 0; i < interop.rgba.size(); ++i)
    differing += interop.rgba[i] != uploaded.rgba[i];
  EXPECT_LE(differing, interop.rgba.size() / 1000) << "the interop overlay draws other boxes";
}

// Through the shared memory the GL draws from the memory the next frame's kernel writes: the
// writer must wait until the GL's last draw has read it. A frame drawn and not yet read back,
// then the next frame written (another colouring) and drawn: the first picture must still be the
// first frame's. The sprites are large, so that the first draw reads its vertices for tens of
// milliseconds (without the wait, the kernel ran inside it on the H200: checked once with the
// wait taken out, docs/BENCHMARKS.md).
TEST(WindowInterop, NextWriteWaitsForTheLastDraw) {
  if (sim::cuda::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  Scene scene;
  scene.open(640, 480);
  render::OffscreenTarget second(640, 480);
  if (!glSharesCudaMemory()) GTEST_SKIP() << "this GL cannot import CUDA's memory";
  const sim::Particles initial = sim::makeScenario("merger", 1000000, 7);
  sim::Simulation sim(sim::cuda::makeCudaBackend(initial.size()), initial, sim::SimParams{});
  app::ViewSettings bySpeed, byComponent;
  bySpeed.colorBy = app::ColorBy::Speed;
  byComponent.colorBy = app::ColorBy::Component;
  app::ParticleView first(bySpeed), next(byComponent);
  first.calibrate(initial);
  next.calibrate(initial);
  const app::Framing framing = app::frameVisible(initial, bySpeed);
  app::aimCamera(scene.camera, framing, 640.0f / 480.0f);
  scene.params.particles = app::particleStyleFor(framing.visible, framing.radius);
  scene.params.particles.spriteSize *= 10.0f;  // most sprites at the 64-pixel cap
  scene.renderer->setPalette(first.palette());
  std::vector<render::ParticleVertex> host;
  first.fill(sim.particles(), host);
  scene.renderer->setParticles(host.data(), host.size());
  const render::Image expected = scene.draw();

  app::VertexWriter writer;
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(writer.write(sim, first, *scene.renderer).empty());
    ASSERT_EQ(writer.path(), "CUDA-GL shared memory");
    scene.renderer->render(scene.camera, scene.params, scene.target->target());  // not read yet
    ASSERT_TRUE(writer.write(sim, next, *scene.renderer).empty());
    scene.renderer->render(scene.camera, scene.params, second.target());
    EXPECT_EQ(scene.target->read().rgba, expected.rgba) << "round " << round;
    EXPECT_NE(second.read().rgba, expected.rgba) << "the second frame's colours differ";
  }
}

TEST(WindowInterop, WriteTimeAtOneMillionParticles) {
  if (sim::cuda::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  Scene scene;
  scene.open(64, 64);  // not drawn into
  const sim::Particles initial = sim::makeScenario("plummer", 1000000, 1);
  sim::Simulation sim(sim::cuda::makeCudaBackend(initial.size()), initial, sim::SimParams{});
  app::ParticleView view(app::ViewSettings{});
  view.calibrate(initial);
  for (const bool shared : {true, false}) {
    app::VertexWriter writer(shared);
    ASSERT_TRUE(writer.write(sim, view, *scene.renderer).empty());  // imports or registers
    sim::cuda::synchronize(nullptr);
    const int kWrites = 50;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kWrites; ++i) writer.write(sim, view, *scene.renderer);
    sim::cuda::synchronize(nullptr);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("interop write of 1M vertices, %s: %.3f ms (host wall, mean of %d)\n",
                writer.path().c_str(), ms / kWrites, kWrites);
    EXPECT_EQ(writer.path().rfind("CUDA-GL", 0), 0u) << writer.path();
    scene.renderer->setParticles(nullptr, 0);
  }
}

}  // namespace
