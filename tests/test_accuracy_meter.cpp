// The window's accuracy meter and sweep without the window (app/accuracy_meter.h,
// app/sweep_runner.h): the numbers the panel shows against sim::measureAccuracy called directly,
// the sample and interval rules, and the window sweep's CSV against the headless --sweep.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "app/core/accuracy_meter.h"
#include "app/core/cli.h"
#include "app/core/sweep_runner.h"
#include "process_support.h"
#include "sim/accuracy.h"
#include "sim/cpu/cpu_backend.h"
#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"

using namespace bhviz;

namespace {

sim::SimParams meterParams(sim::MacKind mac, float theta) {
  sim::SimParams p;
  p.mac = mac;
  p.theta = theta;
  p.softening = 0.05f;
  p.dtMax = 1.0f / 64.0f;
  return p;
}

/// A merger after a few substeps: particles in the backend's key order, forces from the run.
sim::Simulation steppedMerger(const sim::SimParams& p, std::size_t n = 4000) {
  sim::Simulation s(sim::makeCpuBackend(), sim::makeScenario("merger", n, 5), p);
  for (int k = 0; k < 3; ++k) s.substep();
  return s;
}

/// The CSV's rows split into fields, header first.
std::vector<std::vector<std::string>> csvRows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields;
    std::istringstream f(line);
    for (std::string field; std::getline(f, field, ',');) fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

}  // namespace

TEST(AccuracyMeterLive, MeasureStateEqualsMeasureAccuracyCalledDirectly) {
  for (sim::MacKind mac : {sim::MacKind::BarnesHut, sim::MacKind::Acceleration}) {
    const sim::SimParams p = meterParams(mac, 0.7f);
    const sim::Simulation live = steppedMerger(p);
    const sim::Particles state = live.particles();
    sim::CpuBackend scratch;
    const app::MeterResult r = app::measureState(scratch, state, live.time(), p, 500, 9);

    // Offline: the same state in id order, the same sample and seed, a fresh backend.
    const sim::Particles inIdOrder = sim::sortedById(state);
    const sim::AccuracyReference ref = sim::makeReference(inIdOrder, p.softening, 500, 9);
    sim::CpuBackend fresh;
    std::vector<double> relative;
    const sim::AccuracySample direct =
        sim::measureAccuracy(fresh, inIdOrder, p, ref, true, &relative);
    EXPECT_EQ(r.s.error.median, direct.error.median) << sim::toString(mac);
    EXPECT_EQ(r.s.error.p99, direct.error.p99);
    EXPECT_EQ(r.s.error.max, direct.error.max);
    EXPECT_EQ(r.s.interactionsPerParticle, direct.interactionsPerParticle);
    EXPECT_GT(r.s.error.p99, r.s.error.median);
    EXPECT_EQ(r.sample, 500u);
    EXPECT_EQ(r.n, state.size());
    EXPECT_DOUBLE_EQ(r.time, live.time());

    // The colours' errors: exactly the sample's, by id; NaN elsewhere.
    ASSERT_EQ(r.errorById->size(), state.size());
    std::size_t measured = 0;
    for (float e : *r.errorById) measured += std::isfinite(e) ? 1 : 0;
    EXPECT_EQ(measured, 500u);
    for (std::size_t k = 0; k < ref.ids.size(); ++k) {
      ASSERT_EQ((*r.errorById)[ref.ids[k]], static_cast<float>(relative[k])) << "id " << ref.ids[k];
    }

    // Another seed is another sample: the numbers move (so the equality above can fail).
    const app::MeterResult other = app::measureState(scratch, state, live.time(), p, 500, 10);
    EXPECT_NE(other.s.error.median, r.s.error.median);
  }
}

TEST(AccuracyMeterLive, TheMeterShowsMeasureStateOfTheCurrentState) {
  const sim::SimParams p = meterParams(sim::MacKind::Bonsai, 0.6f);
  const sim::Simulation live = steppedMerger(p, 3000);
  app::AccuracyMeter meter;
  app::MeterSettings settings;
  settings.sample = 400;
  settings.everyFrames = 1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool arrived = false;
  while (!arrived && std::chrono::steady_clock::now() < deadline) {
    arrived = meter.update(live, settings, 3, 16.0);
    if (!arrived) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(arrived) << meter.error();
  ASSERT_NE(meter.latest(), nullptr);
  // N = 3000 on the CPU: N² fits the pair budget, so every particle is measured.
  EXPECT_TRUE(meter.plan().everyParticle);
  sim::CpuBackend scratch;
  const app::MeterResult offline =
      app::measureState(scratch, live.particles(), live.time(), p, 3000, 3);
  EXPECT_EQ(meter.latest()->sample, 3000u);
  EXPECT_EQ(meter.latest()->s.error.median, offline.s.error.median);
  EXPECT_EQ(meter.latest()->s.error.p99, offline.s.error.p99);
  ASSERT_EQ(meter.history().size(), 1u);
  EXPECT_EQ(meter.history().back().p99, offline.s.error.p99);
  meter.reset();
  EXPECT_EQ(meter.latest(), nullptr);
  EXPECT_TRUE(meter.history().empty());
}

TEST(AccuracyMeterLive, SampleAndIntervalShrinkWithTheCost) {
  app::MeterPlan small = app::planMeter(2000, 5000, false);
  EXPECT_TRUE(small.everyParticle);
  EXPECT_EQ(small.sample, 5000u);
  app::MeterPlan big = app::planMeter(2000, 1000000, false);  // 1e8 pairs / 1e6
  EXPECT_FALSE(big.everyParticle);
  EXPECT_TRUE(big.reduced);
  EXPECT_EQ(big.sample, 100u);
  big = app::planMeter(2000, 1000000, true);  // the GPU affords the whole request
  EXPECT_FALSE(big.reduced);
  EXPECT_EQ(big.sample, 2000u);
  EXPECT_EQ(app::planMeter(2000, 100000000, false).sample, std::size_t(app::kMeterMinSample));

  app::MeterSettings s;
  s.everyFrames = 30;
  EXPECT_EQ(app::meterInterval(s, 0.0, 16.0), 30);     // nothing measured yet
  EXPECT_EQ(app::meterInterval(s, 20.0, 16.0), 30);    // 20 ms < 10% of 30 frames
  EXPECT_EQ(app::meterInterval(s, 500.0, 20.0), 250);  // 500 ms ≤ 10% of 250 × 20 ms
  s.autoInterval = false;
  EXPECT_EQ(app::meterInterval(s, 500.0, 20.0), 30);
}

TEST(WindowSweep, HasTheHeadlessSweepsErrorColumnsOnTheSameState) {
  const std::string args =
      "--headless --quiet --backend cpu --scenario plummer --n 3000 --seed 2 "
      "--sweep theta=0.4:0.8:0.2 --mac all";
  test::TempDir dir;
  const auto headlessCsv = dir.path / "headless.csv";
  const test::Process run = test::runBhviz(args + " --out " + headlessCsv.string());
  ASSERT_EQ(run.status, 0) << run.err;

  // The window's path: the same options, the scenario through a Simulation (the window's copy of
  // the state comes back in key order with forces), one point per poll.
  std::vector<std::string> argv;
  std::istringstream words(args + " --out unused.csv");
  for (std::string w; words >> w;) argv.push_back(w);
  std::ostringstream out;
  const std::optional<app::Options> o = app::parseCommandLine(argv, out);
  ASSERT_TRUE(o.has_value());
  const sim::Simulation sim(sim::makeCpuBackend(), sim::makeScenario(o->scenario, o->n, o->seed),
                            o->params);
  app::SweepRunner runner;
  runner.start(sim.particles(), sim.params(), o->sweep.macs, o->sweep.thetas, o->seed,
               sim::makeCpuBackend(), {});
  EXPECT_TRUE(runner.running());
  runner.finish();
  EXPECT_FALSE(runner.running());
  EXPECT_TRUE(runner.error().empty()) << runner.error();
  ASSERT_EQ(runner.done(), 12u);
  const auto windowCsv = dir.path / "window.csv";
  runner.exportCsv(windowCsv.string());

  const auto a = csvRows(test::readText(headlessCsv));
  const auto b = csvRows(test::readText(windowCsv));
  ASSERT_EQ(a.size(), 13u);
  ASSERT_EQ(b.size(), a.size());
  EXPECT_EQ(b[0], a[0]);  // the header
  for (std::size_t k = 1; k < a.size(); ++k) {
    ASSERT_EQ(b[k].size(), 6u);
    for (std::size_t c = 0; c < 4; ++c) {  // mac, param, median, p99; the ms columns differ
      EXPECT_EQ(b[k][c], a[k][c]) << "row " << k << ", column " << a[0][c];
    }
    EXPECT_EQ(b[k][5], a[k][5]) << "interactions per particle, row " << k;
  }
  EXPECT_THROW(runner.exportCsv((dir.path / "no" / "such" / "dir.csv").string()),
               std::runtime_error);
  app::SweepRunner empty;
  EXPECT_THROW(empty.exportCsv(windowCsv.string()), std::runtime_error);
  EXPECT_THROW(empty.start(sim.particles(), sim.params(), {}, {0.5f}, 1, sim::makeCpuBackend(), {}),
               std::invalid_argument);
}
