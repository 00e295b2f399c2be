// The CUDA walk without the potential (WalkSettings::potential false, a block substep that ends
// only some steps): the same acceleration bits as with it, and every potential kept. Every test
// skips when there is no CUDA device; the inputs are fresh each run (BHVIZ_TEST_SEED repeats one).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "../scenes.h"
#include "gpu_test_support.h"
#include "walk_scene.h"

using namespace bhviz::sim;
using namespace bhviz::test::walk;

namespace {

using bhviz::test::haveGpu;

std::uint64_t baseSeed() { return bhviz::test::testSeed("test_cuda_walk_potential"); }

}  // namespace

// Without the potential the walk writes the targets' accelerations only: each keeps the
// potential it had, and the accelerations are the bits the walk with the potential gives (the
// same operations). With and without the quadrupole, at N_group 32, 64 and 128 (one, two and
// four target slots a lane: each kernel), over all particles and a sparse substep, and in the
// mode that adds a second tree's share.
TEST(CudaWalk, WithoutThePotentialTheAccelerationsAreTheSameAndThePotentialsStay) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const MacSetup mac{MacCode::Bonsai, 0.5f, 0.0f};
  for (const bool sparse : {false, true}) {
    const std::size_t n = 60000;
    const cuda::ActiveRule rule = sparse ? kSparse : kAll;
    Scene scene;
    scene.buildPlummer(n, baseSeed() + (sparse ? 51 : 53), sparse, mac);
    for (const int nGroup : {32, 64, 128})
      for (const bool quad : {true, false}) {
        cuda::WalkSettings s{mac, quad, 0.05f};
        const float ratio = nGroup == 64 ? 0.0f : 0.15f;  // the far cells' expansion too
        s.expansion = expansionRuleOf(ratio);
        Particles with, without, untouched;
        const cuda::WalkCounters a = scene.forcesRaw(rule, nGroup, s, with);
        s.potential = false;
        const cuda::WalkCounters b = scene.forcesRaw(rule, nGroup, s, without);
        scene.d.accPot.poison();
        cuda::downloadParticles(scene.d, untouched);  // what the walk found there
        const std::string what = std::string(sparse ? "sparse" : "all") + (quad ? ", quad" : "") +
                                 ", N_group " + std::to_string(nGroup) + ", expansion ratio " +
                                 std::to_string(ratio);
        EXPECT_EQ(a.cell, b.cell) << what;
        EXPECT_EQ(a.particle, b.particle) << what;
        EXPECT_EQ(a.expanded, b.expanded) << what;
        // A sparse substep's groups of 32 hold ~4 targets, fewer than kMinExpansionTargets: some
        // seeds expand none there; its groups of 128 (~16) do.
        if (ratio > 0.0f && (!sparse || nGroup == 128)) {
          EXPECT_GT(a.expanded, 0u) << what;
        }
        std::size_t targets = 0, sameAcc = 0, keptPot = 0;
        for (std::size_t i = 0; i < n; ++i) {
          if (!cuda::isTarget(rule, with.bin[i])) continue;
          ++targets;
          sameAcc += sameBits(&with.accPot[i], &without.accPot[i], 3 * sizeof(float)) ? 1 : 0;
          keptPot += sameBits(&untouched.accPot[i].w, &without.accPot[i].w, sizeof(float)) ? 1 : 0;
          ASSERT_TRUE(std::isfinite(with.accPot[i].w)) << what << ": the potential, with it";
        }
        EXPECT_GT(targets, 0u) << what;
        EXPECT_EQ(sameAcc, targets) << what << ": accelerations differ without the potential";
        EXPECT_EQ(keptPot, targets) << what << ": a potential was written without the potential";
      }
  }
  // Adding a second tree's share: the potential stays too.
  Scene scene;
  scene.buildPlummer(20000, baseSeed() + 55, false, mac);
  cuda::WalkSettings s{mac, true, 0.05f};
  s.potential = false;
  Particles before, after;
  scene.forces(kAll, 64, s);
  cuda::downloadParticles(scene.d, before);
  cuda::launchWalk(cuda::WalkSources{scene.tree.walkCell.data(), scene.tree.box.data(),
                                     scene.tree.cells, scene.d.posMass.data()},
                   scene.groups, scene.d, s, cuda::WalkOutput{true, nullptr}, scene.counters.data(),
                   scene.device, nullptr);
  cuda::downloadParticles(scene.d, after);
  std::size_t kept = 0, doubled = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    kept += sameBits(&before.accPot[i].w, &after.accPot[i].w, sizeof(float)) ? 1 : 0;
    doubled += after.accPot[i].x == 2.0f * before.accPot[i].x ? 1 : 0;
  }
  EXPECT_EQ(kept, before.size()) << "the added walk wrote a potential";
  EXPECT_EQ(doubled, before.size()) << "the added walk adds the same accelerations again";
}
