// What the window's accuracy meter costs the frame loop: substeps of a merger with no meter,
// then with AccuracyMeter::update called every frame (as the window does), timing the substep
// and the update (the copy of the state it takes on the main thread) separately.
//   bench_meter [--backend cpu|cuda] [--n N] [--frames F] [--every K] [--sample S]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/accuracy_meter.h"
#include "app/core/cli.h"
#include "app/core/sim_session.h"
#include "bench/bench_cli.h"

using namespace bhviz;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * double(v.size() - 1) + 0.5)];
}

void report(const char* what, const std::vector<double>& ms) {
  std::printf("%-28s median %8.2f  p95 %8.2f  max %8.2f ms\n", what, quantile(ms, 0.5),
              quantile(ms, 0.95), quantile(ms, 1.0));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"accuracy meter cost"};
  std::string backend = "cuda";
  std::size_t n = 1000000;
  int frames = 200, every = 30, sample = 2000;
  cli.add_option("--backend", backend)->check(CLI::IsMember({"cpu", "cuda"}));
  cli.add_option("--n", n)->check(CLI::Range(std::size_t{1}, std::size_t{1000000000}));
  cli.add_option("--frames", frames)->check(CLI::Range(1, 1000000));
  cli.add_option("--every", every)->check(CLI::Range(1, 1000000));
  cli.add_option("--sample", sample)->check(CLI::Range(1, 100000000));
  if (const auto status = bhviz::bench::parseOrExit(cli, argc, argv)) return *status;

  std::ostringstream ignored;
  const auto o = app::parseCommandLine(
      std::vector<std::string>{"--headless", "--scenario", "merger", "--n", std::to_string(n)},
      ignored);
  // The window's session: the merger, the command line's parameters, the backend asked for.
  app::SceneSettings scene;
  scene.scenario = "merger";
  scene.n = n;
  scene.seed = 1;
  scene.backend = backend == "cuda" ? app::BackendChoice::Cuda : app::BackendChoice::Cpu;
  app::SimSession session(scene, o->params);
  const sim::Simulation& sim = session.simulation();
  std::printf("bench_meter: merger, N = %zu, %s backend, %d frames, every %d, sample %d\n", n,
              std::string(sim.backend().name()).c_str(), frames, every, sample);
  for (int k = 0; k < 5; ++k) session.step();  // warm-up

  std::vector<double> plain, withMeter, update;
  for (int f = 0; f < frames; ++f) {
    const auto t0 = Clock::now();
    session.step();
    plain.push_back(msSince(t0));
  }
  app::AccuracyMeter meter;
  app::MeterSettings s;
  s.everyFrames = every;
  s.sample = sample;
  int measurements = 0;
  double frameMs = quantile(plain, 0.5);
  for (int f = 0; f < frames; ++f) {
    const auto t0 = Clock::now();
    session.step();
    withMeter.push_back(msSince(t0));
    const auto t1 = Clock::now();
    if (meter.update(sim, s, 1, frameMs)) ++measurements;
    update.push_back(msSince(t1));
    frameMs = 0.9 * frameMs + 0.1 * msSince(t0);
  }
  report("substep, no meter", plain);
  report("substep, meter running", withMeter);
  report("meter update (main thread)", update);
  const app::MeterResult* r = meter.latest();
  std::printf("measurements %d, interval %d frames, sample %zu%s\n", measurements, meter.interval(),
              meter.plan().sample, meter.plan().reduced ? " (reduced)" : "");
  if (r != nullptr) {
    std::printf("last: median %.3e p99 %.3e, evaluation %.2f ms, whole measurement %.1f ms\n",
                r->s.error.median, r->s.error.p99, r->s.msPerForce, r->wallMs);
  }
  if (!meter.error().empty()) std::printf("meter error: %s\n", meter.error().c_str());
  const double extra = quantile(withMeter, 0.5) + quantile(update, 0.5) - quantile(plain, 0.5);
  double updateTotal = 0.0, stepTotal = 0.0;
  for (double u : update) updateTotal += u;
  for (double w : withMeter) stepTotal += w;
  double plainTotal = 0.0;
  for (double p : plain) plainTotal += p;
  std::printf("median frame change %+.2f ms; total time with meter %+.1f%% (update share %.1f%%)\n",
              extra, 100.0 * ((stepTotal + updateTotal) / plainTotal - 1.0),
              100.0 * updateTotal / (stepTotal + updateTotal));
  return 0;
}
