// The distributed backend, measured: mpirun -np K bench_dist [--scenario merger --n 1000000
// --steps 20 --warmup 3 --backend cpu --theta 0.5 --csv FILE]. Rank 0 prints, per rank, the
// median over the timed steps of each stage, the decomposition (ORB + exchange) and LET times,
// the LET bytes sent per step and the work (interactions) share; then the step's wall time and
// the work imbalance (max / mean). With K = 1 it also times the same steps on the local backend
// alone: the distributed path's overhead.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <vector>

#include "bench/bench_cli.h"
#include "sim/dist/dist.h"
#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"
#if BHVIZ_HAVE_CUDA
#include "sim/cuda/cuda_backend.h"
#endif

using namespace bhviz::sim;

namespace {

struct Options {
  std::string scenario = "merger";
  std::size_t n = 100000;
  int steps = 10;
  int warmup = 2;
  std::string backend = "cpu";
  float theta = 0.5f;
  std::string csv;
  /// SimParams::rebuildInterval. Every evaluation by default: the distributed backend rebuilds
  /// every time (it does not refit), so K = 1's baseline alone does too, and no group size is
  /// tuned on measured times (the ranks' tables stay comparable).
  int rebuildInterval = 1;
  /// The MAC (the tables in docs/BENCHMARKS.md are Bonsai's; the app's default is another).
  MacKind mac = MacKind::Bonsai;
  /// The distributed backend's own settings (--lets, --rebalance, --merge-lets, --migrate,
  /// --frame).
  dist::DistSettings dist;
};

/// An option `name` that takes one of two words into `value` (true: `yes`).
void addChoice(CLI::App& app, const std::string& name, bool& value, const std::string& yes,
               const std::string& no, const std::string& help) {
  app.add_option_function<std::string>(
         name, [&value, yes](const std::string& v) { value = v == yes; },
         help + " (default " + (value ? yes : no) + ")")
      ->check(CLI::IsMember({yes, no}));
}

/// A backend for n particles: a rank's share (`asRank`: checked for a rank's device memory per
/// particle), or one process's.
std::unique_ptr<Backend> makeLocal(dist::LocalKind kind, std::size_t n, bool asRank) {
#if BHVIZ_HAVE_CUDA
  if (kind == dist::LocalKind::Cuda) {
    return cuda::makeCudaBackend(
        n, asRank ? cuda::kDeviceBytesPerRankParticle : cuda::kDeviceBytesPerParticle);
  }
#endif
  (void)n;
  (void)asRank;
  if (kind == dist::LocalKind::Cuda) throw std::runtime_error("built without CUDA");
  return makeCpuBackend();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// Median wall time of a substep on the local backend alone (K = 1's baseline).
double aloneMs(const Options& o, dist::LocalKind kind, const Particles& initial,
               const SimParams& p) {
  Simulation sim(makeLocal(kind, o.n, false), initial, p);
  for (int s = 0; s < o.warmup; ++s) sim.substep();
  std::vector<double> ms;
  for (int s = 0; s < o.steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    sim.substep();
    ms.push_back(msSince(t0));
  }
  return median(ms);
}

int lead(const Options& o, int ranks) {
  const dist::LocalKind kind = o.backend == "cuda" ? dist::LocalKind::Cuda : dist::LocalKind::Cpu;
  SimParams p;
  p.theta = o.theta;
  p.mac = o.mac;
  p.rebuildInterval = o.rebuildInterval;
  const Particles initial = makeScenario(o.scenario, o.n, 1);
  // Rank 0's backend, as every rank's, holds its share (bhviz's sizing: sim::dist::rankShare).
  Simulation sim(
      dist::makeDistributedBackend(makeLocal(kind, dist::rankShare(o.n, ranks), true), o.n, o.dist),
      initial, p);
  for (int s = 0; s < o.warmup; ++s) sim.substep();

  const auto K = static_cast<std::size_t>(ranks);
  std::vector<std::vector<std::array<double, static_cast<int>(Stage::Count)>>> stages(K);
  std::vector<std::vector<double>> letBytes(K), work(K), sent(K), exchange(K);
  std::vector<double> wall, imbalance;
  std::vector<RankReport> before = sim.backend().rankReports();
  const std::uint64_t decompositionsBefore = before.empty() ? 0 : before[0].decompositions;
  std::vector<double> orbBefore(K);
  for (std::size_t r = 0; r < K && r < before.size(); ++r) orbBefore[r] = before[r].orbMs;
  for (int s = 0; s < o.steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    sim.substep();
    wall.push_back(msSince(t0));
    const std::vector<RankReport> now = sim.backend().rankReports();
    double maxWork = 0.0, sumWork = 0.0;
    for (std::size_t r = 0; r < K; ++r) {
      stages[r].push_back(now[r].last.ms);
      letBytes[r].push_back(double(now[r].letBytesSent - before[r].letBytesSent));
      sent[r].push_back(double(now[r].particlesSent - before[r].particlesSent));
      exchange[r].push_back(now[r].exchangeMs - before[r].exchangeMs);
      const double w = double(now[r].work - before[r].work);
      work[r].push_back(w);
      maxWork = std::max(maxWork, w);
      sumWork += w;
    }
    imbalance.push_back(sumWork > 0 ? maxWork * double(K) / sumWork : 1.0);
    before = now;
  }

  const bool nccl = !before.empty() && before[0].letsOverNccl;
  std::printf(
      "bench_dist: %s, N = %zu, %d ranks (%s), %s MAC, theta %.2f, %d steps (medians), LETs %s, "
      "strays %s, frame %s\n",
      o.scenario.c_str(), o.n, ranks, std::string(sim.backend().name()).c_str(),
      std::string(toString(o.mac)).c_str(), o.theta, o.steps,
      ranks == 1 ? "none"
      : nccl     ? "GPU to GPU (NCCL)"
                 : "through the host",
      o.dist.migrate ? "sent on" : "kept",
      dist::frameOnFirstCut(o.dist, o.mac) ? "on the first cut" : "plain");
  std::printf("%4s %10s", "rank", "particles");
  for (int s = 0; s < static_cast<int>(Stage::Count); ++s) {
    std::printf(" %9s", std::string(stageName(static_cast<Stage>(s))).c_str());
  }
  std::printf(" %10s %12s %8s %12s %10s %10s %8s %8s %10s\n", "total ms", "LET MB/step", "work %",
              "int/particle", "walk int/s", "sent/step", "dev GiB", "exch ms", "orb ms/cut");
  std::ofstream csv;
  if (!o.csv.empty()) {
    csv.open(o.csv);
    csv << "ranks,rank,particles";
    for (auto name : kStageNames) csv << ',' << name << "_ms";
    csv << ",total_ms,let_bytes_per_step,work_share,step_wall_ms,step_wall_mean_ms,imbalance"
           ",interactions_per_particle,walk_interactions_per_s,particles_sent_per_step"
           ",device_bytes_peak,exchange_ms,orb_ms_per_cut\n";
  }
  // The mean as well: a decomposition every few steps (--rebalance) is a slow step the median
  // leaves out.
  const double meanWall = std::accumulate(wall.begin(), wall.end(), 0.0) / double(wall.size());
  const std::vector<RankReport> last = sim.backend().rankReports();
  const std::uint64_t cuts = last.empty() ? 0 : last[0].decompositions - decompositionsBefore;
  double workSum = 0.0;
  for (std::size_t r = 0; r < K; ++r) workSum += median(work[r]);
  for (std::size_t r = 0; r < K; ++r) {
    std::printf("%4zu %10llu", r, static_cast<unsigned long long>(last[r].particles));
    double total = 0.0;
    std::vector<double> med(static_cast<int>(Stage::Count));
    for (int s = 0; s < static_cast<int>(Stage::Count); ++s) {
      std::vector<double> v;
      for (const auto& a : stages[r]) v.push_back(a[static_cast<std::size_t>(s)]);
      med[static_cast<std::size_t>(s)] = median(v);
      total += med[static_cast<std::size_t>(s)];
      std::printf(" %9.3f", med[static_cast<std::size_t>(s)]);
    }
    const double share = workSum > 0 ? 100.0 * median(work[r]) / workSum : 0.0;
    // The walk's interactions (its own tree's and the imported LETs') per particle of the rank
    // (each a target: shared steps) and per second of its walk stage: whether a rank walks
    // more, or more slowly.
    const double perParticle =
        last[r].particles > 0 ? median(work[r]) / double(last[r].particles) : 0.0;
    const double walkMs = med[static_cast<std::size_t>(Stage::Walk)];
    const double rate = walkMs > 0 ? median(work[r]) / (walkMs * 1e-3) : 0.0;
    // The particles the exchanges sent on (strays, and at a decomposition the leavers), the
    // most device memory the rank held, and the domains stage's parts: the exchange (median a
    // step) and the ORB's cuts (their mean, over the decompositions of the measured steps).
    const double orbPerCut = cuts > 0 ? (last[r].orbMs - orbBefore[r]) / double(cuts) : 0.0;
    std::printf(" %10.3f %12.3f %8.2f %12.1f %10.3g %10.0f %8.2f %8.3f %10.3f\n", total,
                median(letBytes[r]) / 1e6, share, perParticle, rate, median(sent[r]),
                double(last[r].deviceBytesPeak) / 1073741824.0, median(exchange[r]), orbPerCut);
    if (csv) {
      csv << ranks << ',' << r << ',' << last[r].particles;
      for (double m : med) csv << ',' << m;
      csv << ',' << total << ',' << median(letBytes[r]) << ',' << share / 100.0 << ','
          << median(wall) << ',' << meanWall << ',' << median(imbalance) << ',' << perParticle
          << ',' << rate << ',' << median(sent[r]) << ',' << last[r].deviceBytesPeak << ','
          << median(exchange[r]) << ',' << orbPerCut << '\n';
    }
  }
  std::printf(
      "step: %.3f ms wall (rank 0's clock; mean %.3f), work imbalance %.4f, %llu "
      "decompositions in %d steps\n",
      median(wall), meanWall, median(imbalance),
      static_cast<unsigned long long>(last.empty() ? 0
                                                   : last[0].decompositions - decompositionsBefore),
      o.steps);
  // What the live view pays per frame on rank 0: the particles gathered from every rank, all
  // of them up to the window's budget of 4 M, above it the ids divisible by ⌈N / 4 M⌉
  // (app/scene/vertex_writer.h: viewStride).
  {
    constexpr std::size_t kViewBudget = 4'000'000;
    const auto stride =
        static_cast<std::uint32_t>(o.n <= kViewBudget ? 1 : (o.n + kViewBudget - 1) / kViewBudget);
    std::vector<double> ms;
    Particles view;
    for (int k = 0; k < 5; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      sim.backend().downloadSample(view, stride);
      ms.push_back(msSince(t0));
    }
    std::printf("view gather: %.3f ms for %zu particles (ids divisible by %u)\n", median(ms),
                view.size(), stride);
  }
  if (ranks == 1) {
    const double alone = aloneMs(o, kind, initial, p);
    std::printf("the local backend alone: %.3f ms; the distributed path's overhead %+.2f %%\n",
                alone, 100.0 * (median(wall) / alone - 1.0));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<dist::Job> job;
  try {
    job = dist::Job::startIfLaunched(&argc, &argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_dist: " << e.what() << '\n';
    return 2;
  }
  if (!job) {
    std::cerr << "bench_dist runs under mpirun: mpirun -np K bench_dist [options]\n";
    return 2;
  }
  if (!job->leader()) {
    return job->serve([&](dist::LocalKind kind, std::size_t n) {
#if BHVIZ_HAVE_CUDA
      // The ranks of one machine take its GPUs in turn.
      if (kind == dist::LocalKind::Cuda) cuda::useDevice(job->localRank());
#endif
      return makeLocal(kind, n, true);
    });
  }
  Options o;
  CLI::App app("bench_dist: the distributed backend's stages per rank");
  app.add_option("--scenario", o.scenario, "built-in scenario (default merger)");
  app.add_option("--n", o.n, "particles (default 100000)");
  app.add_option("--steps", o.steps, "timed substeps (default 10)");
  app.add_option("--warmup", o.warmup, "untimed substeps first (default 2)");
  app.add_option("--backend", o.backend, "each rank's backend: cpu or cuda (default cpu)");
  app.add_option("--theta", o.theta, "opening angle (default 0.5)");
  std::string mac = "bonsai";
  app.add_option("--mac", mac, "bonsai (default), bh, multipole or acceleration")
      ->check(CLI::IsMember({"bonsai", "bh", "multipole", "acceleration"}));
  app.add_option("--csv", o.csv, "also write the table as CSV");
  addChoice(app, "--merge-lets", o.dist.mergeLets, "on", "off",
            "CPU ranks: the imported LETs merged into the rank's tree (on) or walked apart (off)");
  addChoice(app, "--migrate", o.dist.migrate, "on", "off",
            "particles that left their rank's domain sent on before each evaluation (on) or kept "
            "until the next decomposition (off)");
  addChoice(app, "--frame", o.dist.frameOnFirstCut, "on-cut", "plain",
            "the trees' key frame: its middle plane on the first ORB cut (on-cut) or the "
            "particles' cube (plain); the multipole MAC's is always plain");
  bool host = false;
  addChoice(app, "--lets", host, "host", "auto",
            "how GPUs' LETs travel: NCCL where it can (auto) or through the host (host)");
  app.add_option("--rebalance", o.dist.imbalance,
                 "decompose at a full step only when the work's imbalance or growth passes R "
                 "(default 1.02; 0: at every full step)")
      ->check(CLI::Validator(
          [](std::string& v) {
            double r = -1.0;
            try {
              std::size_t used = 0;
              r = std::stod(v, &used);
              if (used != v.size()) r = -1.0;
            } catch (const std::exception&) {
              r = -1.0;  // not a number: refused below
            }
            return r == 0.0 || (r >= 1.0 && r <= 100.0) ? std::string()
                                                        : std::string("0 or in [1, 100]");
          },
          "0 or in [1, 100]"));
  std::string rebuild = "every";
  app.add_option("--rebuild", rebuild, "tree rebuilds: every (default), auto or K");
  int status = -1;  // -1: the options are good, run
  try {
    app.parse(argc, argv);
    const std::optional<int> interval = parseRebuildInterval(rebuild);
    if (!interval) throw std::invalid_argument("--rebuild " + rebuild + ": auto, every or K");
    o.rebuildInterval = *interval;
    o.dist.lets = host ? dist::LetTransport::Host : dist::LetTransport::Auto;
    o.mac = *parseMacKind(mac);
  } catch (const CLI::ParseError& e) {
    status = bhviz::bench::exitStatus(app, e);
  } catch (const std::invalid_argument& e) {  // an option's value: before any work
    std::cerr << "bench_dist: " << e.what() << '\n';
    status = 2;
  }
  if (status < 0) {
    try {
      status = lead(o, job->size());
    } catch (const std::exception& e) {
      std::cerr << "bench_dist: " << e.what() << '\n';
      status = 1;
    }
  }
  job->finish(status);
  return status;
}
