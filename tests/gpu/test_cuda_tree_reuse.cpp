// The CUDA backend's trees used again, against the CPU backend's: a tree refitted to the
// particles where they are now, a probe of what a refit would walk (a sample of its groups), and
// a tree rebuilt around a substep's targets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backend_support.h"
#include "sim/cuda/cuda_backend.h"
#include "sim/ic/initial_conditions.h"
#include "sim/simulation.h"

using namespace bhviz::sim;
using bhviz::test::plummerParams;
using bhviz::test::relativeDifferenceP99;

TEST(CudaBackend, TreeRefitMatchesTheCpuRefit) {
  // Rebuild, drift 0.1 time units, refit: the device's refitted tree gives the CPU's forces, for
  // every MAC (the Barnes–Hut one reads the tight box where particles left their cell).
  REQUIRE_GPU();
  const Particles ic = makePlummer(50000, 5);
  for (MacKind mac : {MacKind::Bonsai, MacKind::BarnesHut, MacKind::Multipole}) {
    const SimParams p = plummerParams(mac);
    const Clock clock{0.0, 0, 0, p.dtMax};
    std::unique_ptr<Backend> gpu = cuda::makeCudaBackend(ic.size());
    std::unique_ptr<Backend> cpu = makeCpuBackend();
    for (Backend* b : {gpu.get(), cpu.get()}) {
      b->upload(ic);
      EXPECT_FALSE(b->refitForces(clock, p, ForceTargets::All, false)) << "no tree to refit yet";
      b->drift(0.1f);
      b->resetProfile();
      ASSERT_TRUE(b->refitForces(clock, p, ForceTargets::All, true)) << b->name();
      EXPECT_EQ(b->profile()[Stage::Sort], 0.0) << b->name();
      EXPECT_GT(b->profile()[Stage::Moments], 0.0) << b->name();
    }
    Particles a, b;
    gpu->download(a);
    cpu->download(b);
    ASSERT_EQ(a.id, b.id) << "both kept the order of their (identical) rebuilds";
    EXPECT_LE(relativeDifferenceP99(a, b).acc, 1e-4) << toString(mac);
    // And a refit of another N_leaf rebuilds.
    SimParams other = p;
    other.nLeaf = 32;
    EXPECT_FALSE(gpu->refitForces(clock, other, ForceTargets::All, true));
  }
}

TEST(CudaBackend, AProbeOfARefitsInteractionsMatchesTheCpusAndChangesNoParticle) {
  // Backend::probeRefit: the refitted tree's groups sampled by index (every 4th), alike on both
  // backends; every group gives the refit's own count; the particles stay as they were, and
  // the rebuild after it is the rebuild without it, bit for bit.
  REQUIRE_GPU();
  const Particles ic = makePlummer(50000, 6);
  const Clock clock{0.0, 0, 0, 1.0f / 128.0f};
  const auto perTarget = [](const InteractionCounts& c) {
    return double(c.cell + c.particle) / double(c.targets);
  };
  for (const MacKind mac : {MacKind::Bonsai, MacKind::Acceleration}) {
    SCOPED_TRACE(toString(mac));
    SimParams p = plummerParams(mac);
    p.nGroup = 16;
    std::unique_ptr<Backend> gpu = cuda::makeCudaBackend(ic.size());
    std::unique_ptr<Backend> plain = cuda::makeCudaBackend(ic.size());
    std::unique_ptr<Backend> refit = cuda::makeCudaBackend(ic.size());
    std::unique_ptr<Backend> cpu = makeCpuBackend();
    for (Backend* b : {gpu.get(), plain.get(), refit.get(), cpu.get()}) {
      b->upload(ic);
      b->computeForces(clock, p, ForceTargets::All, false);
      b->drift(0.05f);
      b->resetProfile();
    }
    const auto probed = [&](Backend& b, std::uint32_t every) {
      EXPECT_TRUE(b.probeRefit(clock, p, ForceTargets::All, true, every));
      const Backend::RefitProbe r = b.refitProbe();
      EXPECT_GT(r.ms, 0.0);
      return r.interactionsPerTarget;
    };
    Particles before, after;
    gpu->download(before);
    ASSERT_TRUE(refit->refitForces(clock, p, ForceTargets::All, true));
    const double r = perTarget(refit->profile().interactions);
    EXPECT_NEAR(probed(*gpu, 1), r, 1e-12 * r);
    const double g = probed(*gpu, 4), c = probed(*cpu, 4);
    EXPECT_GT(probed(*gpu, 1u << 30), 0.0) << "the first group alone";
    std::printf("probe: gpu %.1f, cpu %.1f, whole refit %.1f interactions a target\n", g, c, r);
    EXPECT_NEAR(g / c, 1.0, 5e-3);  // fp32 MAC flips and the drift's rounding, as above
    EXPECT_NEAR(g, r, 0.05 * r);
    gpu->download(after);
    ASSERT_EQ(after.size(), before.size());
    EXPECT_EQ(std::memcmp(after.posMass.data(), before.posMass.data(), ic.size() * sizeof(Vec4)),
              0);
    EXPECT_EQ(std::memcmp(after.accPot.data(), before.accPot.data(), ic.size() * sizeof(Vec4)), 0)
        << "the sample's forces go to scratch";
    gpu->computeForces(clock, p, ForceTargets::All, true);
    plain->computeForces(clock, p, ForceTargets::All, true);
    Particles a, b;
    gpu->download(a);
    plain->download(b);
    EXPECT_EQ(std::memcmp(a.accPot.data(), b.accPot.data(), ic.size() * sizeof(Vec4)), 0);
    EXPECT_EQ(std::memcmp(a.posMass.data(), b.posMass.data(), ic.size() * sizeof(Vec4)), 0);
  }
}

TEST(CudaBackend, RebuildsAroundTheTargetsMatchTheCpus) {
  // Build, then twice: drift, rebuild around the centre's targets (the second over cells whose
  // first keys the first clamped). The device's forces on the targets are the CPU's, each
  // keeps every particle and walks far fewer interactions than the refitted tree. Under the
  // acceleration MAC both backends cut the targets' few groups into runs (group_runs.h), alike.
  REQUIRE_GPU();
  Particles ic = makePlummer(50000, 6);
  for (std::size_t i = 0; i < ic.size(); ++i) {
    const Vec4 x = ic.posMass[i];
    ic.bin[i] = std::sqrt(x.x * x.x + x.y * x.y + x.z * x.z) < 0.3f ? 4 : 1;
  }
  const Clock all{0.0, 0, 4, 1.0f / 16.0f}, centre{0.0, 1, 4, 1.0f / 16.0f};
  for (const MacKind mac : {MacKind::Bonsai, MacKind::Acceleration}) {
    SCOPED_TRACE(toString(mac));
    const SimParams p = plummerParams(mac);
    std::unique_ptr<Backend> gpu = cuda::makeCudaBackend(ic.size());
    std::unique_ptr<Backend> cpu = makeCpuBackend();
    std::unique_ptr<Backend> refit = cuda::makeCudaBackend(ic.size());
    for (Backend* b : {gpu.get(), cpu.get(), refit.get()}) {
      b->upload(ic);
      b->computeForces(all, p, ForceTargets::All, false);
    }
    for (int round = 0; round < 2; ++round) {
      SCOPED_TRACE("round " + std::to_string(round));
      for (Backend* b : {gpu.get(), cpu.get(), refit.get()}) {
        b->drift(0.05f);
        b->resetProfile();
      }
      ASSERT_TRUE(gpu->rebuildAroundTargets(centre, p, ForceTargets::Active, true));
      ASSERT_TRUE(cpu->rebuildAroundTargets(centre, p, ForceTargets::Active, true));
      ASSERT_TRUE(refit->refitForces(centre, p, ForceTargets::Active, true));
      EXPECT_GT(gpu->profile()[Stage::Sort], 0.0);
      const InteractionCounts& g = gpu->profile().interactions;
      const InteractionCounts& c = cpu->profile().interactions;
      const InteractionCounts& r = refit->profile().interactions;
      EXPECT_EQ(g.targets, c.targets);
      const double perG = double(g.cell + g.particle) / double(g.targets);
      const double perC = double(c.cell + c.particle) / double(c.targets);
      const double perR = double(r.cell + r.particle) / double(r.targets);
      std::printf("interactions per target: gpu %.0f, cpu %.0f, refitted %.0f\n", perG, perC, perR);
      // The same trees, up to MAC decisions fp32 flips and particles a drift's rounding (fused on
      // the device) puts across a cell's face.
      EXPECT_NEAR(perG / perC, 1.0, 5e-3);
      EXPECT_LT(perG, 0.95 * perR);
      Particles a, b;
      gpu->download(a);
      cpu->download(b);
      a = sortedById(a);
      b = sortedById(b);
      for (std::uint32_t i = 0; i < a.size(); ++i) ASSERT_EQ(a.id[i], i) << "every particle kept";
      std::vector<double> diff;  // the targets' relative force differences
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (a.bin[i] != 4) continue;
        const Vec4 x = a.accPot[i], y = b.accPot[i];
        const double d =
            std::sqrt(double(x.x - y.x) * (x.x - y.x) + double(x.y - y.y) * (x.y - y.y) +
                      double(x.z - y.z) * (x.z - y.z));
        diff.push_back(d / std::sqrt(double(y.x) * y.x + double(y.y) * y.y + double(y.z) * y.z));
      }
      ASSERT_GT(diff.size(), 1000u);
      std::sort(diff.begin(), diff.end());
      EXPECT_LT(diff[diff.size() * 99 / 100], 1e-4) << "the targets' forces against the CPU's";
      EXPECT_LT(diff.back(), 5e-3);
    }
  }
}
