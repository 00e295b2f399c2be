// Device time of the groups and walk stages on a Plummer sphere (Hénon units), with the
// interactions per particle and the force error against exact direct summation, over θ.
// CUDA events around each stage, 3 warm-ups, then the median (and min/max) of repeated runs;
// the tree is built once per N and its moments recomputed for each θ (untimed).
//
// The reference: sim::directSum (double precision, OpenMP on the host) for a random sample of
// BHVIZ_BENCH_SAMPLE particles (default 4000) against all N. At 4M that is 1.6e10 pair terms,
// a few seconds on a 16-core host; computed once per N and shared by every θ.
//
//   bench_cuda_walk [N ...]           default: 1000000 4000000
//   env BHVIZ_BENCH_REPS (default 25), BHVIZ_BENCH_SAMPLE (4000), BHVIZ_BENCH_THETAS
//   ("0.4,0.5,0.75"), BHVIZ_BENCH_QUAD (1; 0 = monopoles only), BHVIZ_BENCH_LEAF (N_leaf, 16),
//   BHVIZ_BENCH_MERGER (0; 1 = the galaxy merger instead of the Plummer sphere),
//   BHVIZ_BENCH_NEAR (1; 0 = the walk without its P2P: what the near field costs, and so the
//   most a cheaper near field could save; the forces and errors are then not the walk's),
//   BHVIZ_BENCH_P2P (plain; mutual = the near field pair by pair, walk_mutual.h: the walk time
//   is then all four of its steps, and the pairs evaluated are printed)
// Also printed: the walk's warp busy fraction (time between a warp's first group and its last
// over the whole walk's span, averaged: 1 − busy is the tail and start-up idling), the deepest
// cell stack and the entries spilled from shared to global memory.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/cuda/walk.h"
#include "sim/cuda/walk_mutual.h"
#include "sim/direct_sum.h"
#include "sim/ic/initial_conditions.h"
#include "sim/params.h"

using namespace bhviz::sim;

namespace {

constexpr float kSoftening = 0.05f;
constexpr int kGroup = 64;

int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

int leafSize() { return std::max(1, envInt("BHVIZ_BENCH_LEAF", 16)); }
bool merger() { return envInt("BHVIZ_BENCH_MERGER", 0) != 0; }
/// BHVIZ_BENCH_P2P (plain, the default, or mutual); throws on another value.
bool mutual() {
  const char* v = std::getenv("BHVIZ_BENCH_P2P");
  if (v == nullptr) return false;
  const std::optional<P2pMode> mode = parseP2pMode(v);
  if (!mode) throw std::invalid_argument(std::string("BHVIZ_BENCH_P2P=") + v + ": plain or mutual");
  return *mode == P2pMode::Mutual;
}

std::vector<float> thetas() {
  const char* v = std::getenv("BHVIZ_BENCH_THETAS");
  std::vector<float> out;
  std::stringstream s(v ? v : "0.4,0.5,0.75");
  for (std::string item; std::getline(s, item, ',');) out.push_back(std::stof(item));
  return out;
}

struct Summary {
  double median = 0, min = 0, max = 0;
};

Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

struct Row {
  std::size_t n;
  float theta;
  Summary groups, walk;
  double perParticle, m2p, p2p, rate;
  double evaluated;  // P2P evaluations per particle (mutual: each pair both ways counts once)
  ForceError error;
  double busy;  // warp busy fraction of the last walk: Σ busy / (warps × span)
  unsigned stackPeak;
  unsigned long long spilled;
};

Row benchTheta(std::size_t n, float theta, int reps, cuda::DeviceParticles& d,
               cuda::BuildWorkspace& ws, cuda::DeviceTree& tree, cuda::DeviceGroups& groups,
               cuda::WalkCounters* counters, const std::vector<std::uint32_t>& sample,
               const std::vector<Accel4d>& ref) {
  const MacSetup mac{MacCode::Bonsai, theta, 0.0f};
  cuda::launchMoments(tree, d, ws, mac, nullptr);
  const cuda::ActiveRule all{0, 0, true};
  cuda::WalkSettings s{mac, envInt("BHVIZ_BENCH_QUAD", 1) != 0, kSoftening};
  s.nearField = envInt("BHVIZ_BENCH_NEAR", 1) != 0;
  cuda::EventTimer tGroups, tWalk;
  const cuda::DeviceProperties device = cuda::queryDeviceProperties();
  std::vector<double> groupMs, walkMs;
  cuda::MutualWorkspace mutualSpace;
  for (int rep = -3; rep < reps; ++rep) {
    tGroups.start(nullptr);
    cuda::launchGroups(tree, d, ws, all, kGroup, groups, device, nullptr);
    tGroups.stop(nullptr);
    tWalk.start(nullptr);
    if (mutual()) {
      cuda::launchWalkMutual(tree, groups, d, s, nullptr, counters, device, mutualSpace, nullptr);
    } else {
      cuda::launchWalk(tree, groups, d, s, counters, device, nullptr);
    }
    tWalk.stop(nullptr);
    const double g = tGroups.elapsedMs(), w = tWalk.elapsedMs();
    if (rep >= 0) {
      groupMs.push_back(g);
      walkMs.push_back(w);
    }
  }
  const InteractionCounts c = cuda::downloadCounters(counters);
  cuda::WalkCounters raw{};
  cuda::copyToHost(&raw, counters, sizeof(raw));
  const double span = double(raw.endMax - ~raw.startInv);
  const std::size_t groupCount = cuda::downloadGroups(groups).size();
  std::printf("  theta=%.2f: %zu groups, %.1f particles per group\n", double(theta), groupCount,
              double(n) / double(groupCount));
  Particles h;
  cuda::downloadParticles(d, h);
  Row r{n,
        theta,
        summarize(groupMs),
        summarize(walkMs),
        0,
        0,
        0,
        0,
        0,
        forceError(h, sample, ref),
        double(raw.busyNs) / (double(raw.warps) * span),
        raw.stackPeak,
        raw.spilled};
  r.m2p = double(c.cell) / double(c.targets);
  r.p2p = double(c.particle) / double(c.targets);
  r.perParticle = r.m2p + r.p2p;
  r.rate = double(c.cell + c.particle) / (r.walk.median * 1e-3);
  r.evaluated =
      mutual() ? double(cuda::downloadNearPairs(mutualSpace).pairs) / double(c.targets) : r.p2p;
  return r;
}

std::vector<Row> benchN(std::size_t n, int reps, std::size_t sampleSize) {
  const Particles h = merger() ? makeMerger(n, 12345) : makePlummer(n, 12345);
  cuda::DeviceParticles d;
  cuda::BuildWorkspace ws;
  cuda::DeviceTree tree;
  cuda::DeviceGroups groups;
  cuda::DeviceBuffer<cuda::WalkCounters> counters;
  counters.reserve(1);
  cuda::uploadParticles(h, d);
  cuda::launchBuild(d, Curve::Hilbert, leafSize(), {MacCode::Bonsai, 0.5f, 0.0f}, ws, tree,
                    nullptr);
  Particles sorted;
  cuda::downloadParticles(d, sorted);
  const std::vector<std::uint32_t> sample = sampleIndices(n, sampleSize, 777);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<Accel4d> ref = directSum(sorted, sample, kSoftening);
  const double refS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("N=%zu cells=%zu depth=%d: direct-sum reference for %zu particles in %.1f s\n", n,
              tree.cells, tree.depth(), sample.size(), refS);
  std::vector<Row> rows;
  for (float theta : thetas()) {
    rows.push_back(benchTheta(n, theta, reps, d, ws, tree, groups, counters.data(), sample, ref));
    const Row& r = rows.back();
    std::printf(
        "  theta=%.2f groups %.4f ms (min %.4f max %.4f)  walk %.4f ms (min %.4f max %.4f)\n",
        double(r.theta), r.groups.median, r.groups.min, r.groups.max, r.walk.median, r.walk.min,
        r.walk.max);
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (cuda::deviceCount() == 0) {
      std::printf("bench_cuda_walk: no CUDA device, nothing to measure\n");
      return 0;
    }
    std::vector<std::size_t> sizes;
    for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
    if (sizes.empty()) sizes = {1000000, 4000000};
    const int reps = std::max(1, envInt("BHVIZ_BENCH_REPS", 25));
    const auto sample = static_cast<std::size_t>(std::max(1, envInt("BHVIZ_BENCH_SAMPLE", 4000)));
    std::vector<Row> rows;
    for (std::size_t n : sizes) {
      const std::vector<Row> r = benchN(n, reps, sample);
      rows.insert(rows.end(), r.begin(), r.end());
    }
    std::printf(
        "\n%s, eps=%.2f, bonsai MAC, quadrupole, nLeaf=%d, nGroup=%d, %s, %s, median of %d\n",
        merger() ? "merger" : "Plummer", double(kSoftening), leafSize(), kGroup,
        envInt("BHVIZ_BENCH_NEAR", 1) != 0 ? "with P2P" : "WITHOUT P2P",
        mutual() ? "mutual near field" : "plain near field", reps);
    std::printf("%9s %6s %10s %9s %9s %8s %8s %8s %11s %10s %10s %6s %6s %9s\n", "N", "theta",
                "groups_ms", "walk_ms", "int/part", "m2p", "p2p", "p2p_eval", "int/s", "err_med",
                "err_p99", "busy", "stack", "spilled");
    for (const Row& r : rows) {
      std::printf(
          "%9zu %6.2f %10.4f %9.4f %9.1f %8.1f %8.1f %8.1f %11.3e %10.3e %10.3e %6.3f %6u %9llu\n",
          r.n, double(r.theta), r.groups.median, r.walk.median, r.perParticle, r.m2p, r.p2p,
          r.evaluated, r.rate, r.error.median, r.error.p99, r.busy, r.stackPeak, r.spilled);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda_walk: %s\n", e.what());
    return 1;
  }
}
