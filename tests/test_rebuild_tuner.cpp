// The step's tuners. The rebuild tuner (sim/rebuild_tuner.h): its fits recover known parameters
// from synthetic timing series and choose the model they came from; on synthetic machines its
// decisions land on the interval that minimises the mean cost (a brute-force search over fixed
// intervals finds it too), and where every refit loses (steep aging, block steps' many small
// evaluations) it is no slower than rebuilding every time. The group tuner (sim/group_tuner.h): it
// settles on the fastest group size per kind of evaluation and follows it when it moves.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "sim/group_tuner.h"
#include "sim/rebuild_tuner.h"

using namespace bhviz::sim;

namespace {

/// Extra walk times of refits at ages dt, 2dt, …: targets·g(age), times a lognormal noise of
/// relative size `noise`; targets cycle through `targets`.
std::vector<AgingSample> series(const std::function<double(double)>& g,
                                const std::vector<double>& targets, int count, double dt,
                                double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> gauss(0.0, noise);
  std::vector<AgingSample> out;
  for (int i = 1; i <= count; ++i) {
    const double x = i * dt, t = targets[i % targets.size()];
    out.push_back({x, t, t * g(x) * std::exp(gauss(rng))});
  }
  return out;
}

}  // namespace

TEST(AgingFit, LinearSeriesGivesItsSlopeAndIsChosen) {
  const double b = 4e-5;  // ms per target and unit of time
  const auto s = series([&](double x) { return b * x; }, {1e6, 3e5, 2e4}, 16, 0.01, 0.02, 1);
  const AgingFit f = fitAging(AgingModel::Linear, s);
  ASSERT_EQ(f.model, AgingModel::Linear);
  EXPECT_NEAR(f.b, b, 0.03 * b);
  // A straight line is not better told by a curve with one more parameter.
  EXPECT_NE(fitBestAging(s).model, AgingModel::Parabolic);
}

TEST(AgingFit, PowerLawSeriesGivesItsExponentAndIsChosen) {
  const double b = 2e-4, c = 2.5;
  const auto s = series([&](double x) { return b * std::pow(x, c); }, {1e6}, 20, 0.05, 0.01, 2);
  const AgingFit f = fitAging(AgingModel::PowerLaw, s);
  ASSERT_EQ(f.model, AgingModel::PowerLaw);
  EXPECT_NEAR(f.c, c, 0.1);
  EXPECT_NEAR(f.b, b, 0.15 * b);
  EXPECT_EQ(fitBestAging(s).model, AgingModel::PowerLaw);
}

TEST(AgingFit, ParabolicSeriesIsChosenOverALine) {
  const double b = 1e-5, c = 2e-4;
  const auto s = series([&](double x) { return b * x + c * x * x; }, {1e6}, 24, 0.05, 0.005, 3);
  const AgingFit f = fitAging(AgingModel::Parabolic, s);
  ASSERT_EQ(f.model, AgingModel::Parabolic);
  EXPECT_NEAR(f.c, c, 0.1 * c);
  EXPECT_NEAR(f.b, b, 0.3 * b);
  const AgingFit best = fitBestAging(s);
  EXPECT_NE(best.model, AgingModel::Linear) << "a line leaves the curvature in its residuals";
  EXPECT_LT(best.reducedChi2, fitAging(AgingModel::Linear, s).reducedChi2);
}

TEST(AgingFit, CurvesNeedDegreesOfFreedomToSpare) {
  const auto s = series([](double x) { return 1e-5 * x; }, {1e6}, 4, 0.01, 0.05, 4);
  EXPECT_EQ(fitAging(AgingModel::PowerLaw, s).model, AgingModel::None);
  EXPECT_EQ(fitAging(AgingModel::Parabolic, s).model, AgingModel::None);
  EXPECT_EQ(fitBestAging(s).model, AgingModel::Linear);
  EXPECT_EQ(fitBestAging({}).model, AgingModel::None);
  const AgingFit one = fitBestAging({{0.01, 1e6, 5.0}});
  ASSERT_EQ(one.model, AgingModel::Linear) << "one sample: the line through it";
  EXPECT_NEAR(one.b, 5.0 / 0.01 / 1e6, 1e-12);
  EXPECT_FALSE(std::isfinite(one.reducedChi2)) << "no degree of freedom left";
}

namespace {

/// A synthetic machine: evaluations come in kinds (their targets and fresh walk time per
/// target), in a fixed cycle; the tree's aging adds targets·b·age^p ms to a walk; a rebuild
/// costs `rebuildMs` more than a refit. With `around`, a kind's rebuild around its targets costs
/// aroundMs[kind] more than a refit and walks aroundWalkMs[kind] longer than fresh; afterwards an
/// evaluation with no more targets walks a tree aged since then (its targets lie in the cover), a
/// larger one a tree aged since the rebuild (as Simulation::treeAge tells the tuner).
struct Machine {
  double rebuildMs = 0.6, b = 4e-7, p = 1.0, dt = 0.01;
  bool around = false;
  struct Kind {
    int kind;
    double targets, msPerTarget;
  };
  std::vector<Kind> cycle{{0, 1e6, 5e-6}};
  std::array<double, 8> aroundMs{};      ///< by kind
  std::array<double, 8> aroundWalkMs{};  ///< by kind
  double extraMs(const Kind& k, double age) const { return k.targets * b * std::pow(age, p); }
};

struct Outcome {
  double costPerTime = 0.0;   // rebuilds and the aging's extra walk [ms / time]
  double meanInterval = 0.0;  // [evaluations]
  double aroundShare = 0.0;   // of the evaluations, those rebuilt around their targets
  std::uint64_t refits = 0;
};

/// `policy`: 0 the tuner, K ≥ 1 rebuild at the first evaluation and at each i with i mod K =
/// `phase` (the tuner then only records).
Outcome runMachine(const Machine& m, int evaluations, int policy = 0, int phase = 0) {
  RebuildTuner tuner;
  double cost = 0.0, age = 0.0;
  std::uint64_t rebuilds = 0;
  int since = 0;
  RebuildTuner::Outlook ahead;  // what the cycle brings next, as Simulation::outlook tells it
  ahead.spacing = m.dt;
  ahead.targets.resize(RebuildTuner::kHorizon);
  if (m.around) ahead.aroundMs.resize(RebuildTuner::kHorizon);
  std::vector<double> aroundKnown(8, -1.0);  // by kind, as Simulation::m_aroundMsByBin
  std::uint64_t arounds = 0, refits = 0;
  double sinceAround = 1e300, aroundTargets = 0.0;
  for (int i = 0; i < evaluations; ++i) {
    const Machine::Kind& k = m.cycle[i % m.cycle.size()];
    const double treeAge = sinceAround < age && k.targets <= aroundTargets ? sinceAround : age;
    TreeChoice made =
        i == 0 || (policy > 0 && i % policy == phase) ? TreeChoice::Rebuild : TreeChoice::Refit;
    if (policy == 0) {
      // Each one's age if nothing is rebuilt before it, by the rule of Simulation::outlook.
      ahead.ages.resize(ahead.targets.size());
      bool aroundValid = sinceAround < age;
      for (std::size_t j = 0; j < ahead.targets.size(); ++j) {
        const Machine::Kind& next = m.cycle[(i + j) % m.cycle.size()];
        ahead.targets[j] = next.targets;
        if (m.around) ahead.aroundMs[j] = aroundKnown[next.kind];
        const bool inCover = aroundValid && next.targets <= aroundTargets;
        ahead.ages[j] = (inCover ? sinceAround : age) + double(j) * m.dt;
        aroundValid = inCover;
      }
      made = tuner.choose(treeAge, k.kind, ahead);
    }
    if (made == TreeChoice::Rebuild) {
      age = 0.0;
      sinceAround = 1e300;
      since = 0;
    } else {
      ++since;
    }
    if (made == TreeChoice::AroundTargets) {
      sinceAround = 0.0;
      aroundTargets = k.targets;
    }
    const double extra = made == TreeChoice::Refit           ? m.extraMs(k, treeAge)
                         : made == TreeChoice::AroundTargets ? m.aroundWalkMs[k.kind]
                                                             : 0.0;
    const double beyondRefit = made == TreeChoice::Rebuild         ? m.rebuildMs
                               : made == TreeChoice::AroundTargets ? m.aroundMs[k.kind]
                                                                   : 0.0;
    cost += beyondRefit + extra;
    if (policy == 0) {
      tuner.record(made, k.kind, i * m.dt, made == TreeChoice::Refit ? treeAge : 0.0, k.targets,
                   k.targets * k.msPerTarget + extra, beyondRefit);
    }
    // What the tuner charges it (Simulation::recordEvaluation): its stages and its walk's excess.
    if (made == TreeChoice::AroundTargets) aroundKnown[k.kind] = tuner.state().aroundMs;
    rebuilds += made == TreeChoice::Rebuild;
    refits += made == TreeChoice::Refit;
    arounds += made == TreeChoice::AroundTargets;
    age += m.dt;
    sinceAround += m.dt;
  }
  return {cost / (evaluations * m.dt), double(evaluations) / double(rebuilds),
          double(arounds) / double(evaluations), refits};
}

/// The best fixed interval by brute force: its cost per unit of time.
double bestFixed(const Machine& m, int evaluations) {
  double best = 1e300;
  for (int k = 1; k <= 200; ++k) best = std::min(best, runMachine(m, evaluations, k).costPerTime);
  return best;
}

/// Block steps as measured on M31 (1M, H100): a full step of 8 substeps whose targets are the
/// centre's 25,000 (walked at 50 ns each), 90,000, 300,000 and at the step's end all 10⁶.
Machine blockSteps() {
  Machine m;
  m.dt = 1.0 / 64.0;
  m.rebuildMs = 0.55;
  m.cycle = {{3, 25e3, 5e-5}, {2, 9e4, 3.5e-5}, {3, 25e3, 5e-5}, {1, 3e5, 8e-6},
             {3, 25e3, 5e-5}, {2, 9e4, 3.5e-5}, {3, 25e3, 5e-5}, {0, 1e6, 5.5e-6}};
  return m;
}

}  // namespace

TEST(RebuildTuner, LinearAgingRebuildsNearTheOptimalInterval) {
  const Machine m;
  const Outcome o = runMachine(m, 2000);
  // Continuous optimum of (R + W·b·A²/2)/A: A = sqrt(2R / (W·b)), W = targets / dt.
  const double optimum = std::sqrt(2.0 * m.rebuildMs / (1e6 / m.dt * m.b)) / m.dt;
  EXPECT_NEAR(o.meanInterval, optimum, 0.25 * optimum);
  EXPECT_LE(o.costPerTime, 1.1 * bestFixed(m, 2000));
}

TEST(RebuildTuner, SteepAgingRebuildsOftenAndGentleAgingSeldom) {
  Machine steep;
  steep.b = 4e-5;  // one step of aging costs 2/3 of a rebuild
  Machine gentle;
  gentle.b = 4e-7;
  gentle.p = 2.0;
  const Outcome s = runMachine(steep, 2000), g = runMachine(gentle, 4000);
  EXPECT_LT(s.meanInterval, 3.0);
  EXPECT_GT(g.meanInterval, 20.0);
  EXPECT_LE(s.costPerTime, 1.15 * bestFixed(steep, 2000));
  EXPECT_LE(g.costPerTime, 1.15 * bestFixed(gentle, 4000));
}

TEST(RebuildTuner, BlockStepsWhereEveryRefitLosesAreNoSlowerThanRebuildingEveryTime) {
  // M31's centre: one substep of aging adds 45 % to the central targets' walk (measured).
  Machine m = blockSteps();
  m.b = 1.6e-3;
  const Outcome tuned = runMachine(m, 4096), every = runMachine(m, 4096, 1);
  EXPECT_LE(tuned.costPerTime, 1.05 * every.costPerTime);
  EXPECT_LT(tuned.meanInterval, 1.2);
}

TEST(RebuildTuner, BlockStepsWithSlowAgingRefitAndSave) {
  Machine m = blockSteps();
  m.b = 2e-6;
  const Outcome tuned = runMachine(m, 4096), every = runMachine(m, 4096, 1);
  EXPECT_LT(tuned.costPerTime, 0.7 * every.costPerTime);
  EXPECT_LE(tuned.costPerTime, 1.15 * bestFixed(m, 4096));
}

/// Block steps as measured on M31 at 2²³ (H200, 2026-11-27, η 0.2, before the plan): the deepest
/// bin's substep gives forces to the centre's 217,000, every other one to 0.76, 2.5, 5 or 8.4
/// million; the linear fit of the aging (b = 4.1e-4 ms per target and unit of time) makes one
/// substep (1/128) of it 0.7 ms on the centre's walk (half its fresh walk), against a rebuild's
/// 1.97 ms, but 2.4 ms on the next substep's.
Machine blockSteps8M() {
  Machine m;
  m.dt = 1.0 / 128.0;
  m.rebuildMs = 1.97;
  m.b = 4.1e-4;
  const Machine::Kind centre{4, 2.17e5, 6.4e-6}, bin3{3, 7.58e5, 4.2e-6}, bin2{2, 2.55e6, 3.4e-6},
      bin1{1, 4.96e6, 3.1e-6}, all{0, 8.39e6, 2.6e-6};
  m.cycle = {centre, bin3, centre, bin2, centre, bin3, centre, bin1,
             centre, bin3, centre, bin2, centre, bin3, centre, all};
  return m;
}

TEST(RebuildTuner, BlockStepsRefitTheSmallSubstepsAndRebuildBeforeTheLargeOnes) {
  // Each refit of a large substep costs more than a rebuild, each refit of the centre's less: the
  // cheapest plan rebuilds before every large substep (the odd ones) and refits the centre's.
  // The uniform rate of targets the tuner held against the aging before asked for a rebuild at
  // every one (45 % more here; rebuilding every substep, 48 %).
  const Machine m = blockSteps8M();
  const Outcome tuned = runMachine(m, 4096), every = runMachine(m, 4096, 1),
                beforeLarge = runMachine(m, 4096, 2, 1), beforeSmall = runMachine(m, 4096, 2, 0);
  EXPECT_LE(tuned.costPerTime, 1.02 * beforeLarge.costPerTime);
  EXPECT_LT(tuned.costPerTime, 0.75 * every.costPerTime);
  EXPECT_LT(beforeLarge.costPerTime, 0.5 * beforeSmall.costPerTime) << "the plan's phase matters";
  EXPECT_NEAR(tuned.meanInterval, 2.0, 0.1);
}

TEST(RebuildTuner, BlockStepsRebuildAroundTheSmallSubstepsTargetsWhereThatCostsLessThanTheirAging) {
  // The same machine with the third choice, at costs like those measured on the CPU's twin
  // (docs/BENCHMARKS.md, "A tree rebuilt around the targets"): the centre's targets are covered
  // by 14 % of the particles, the next bin's by more, the larger substeps' by all of them (a
  // rebuild around them then costs more than a whole one: every key sorted, and the cover's own
  // passes). A centre substep's aging after one substep (0.7 ms) is worth a rebuild around its
  // targets (0.45 ms).
  Machine m = blockSteps8M();
  m.aroundMs = {1.1 * m.rebuildMs, 1.1 * m.rebuildMs, 1.1 * m.rebuildMs, 1.1, 0.45};
  const Outcome without = runMachine(m, 4096);
  m.around = true;
  const Outcome with = runMachine(m, 4096);
  // Per cycle of 16 (1/8 of a unit of time) without: 8 rebuilds (15.8 ms) and 8 centre refits
  // aged one substep (5.6): 171 ms per unit. The best plan with it: rebuilds before the 4
  // evaluations larger than bin 3's (7.9 ms), a rebuild around the targets before each of bin
  // 3's (4.4; the next centre's targets lie in its cover) and each centre's (3.6): 127 ms.
  const double best = (4.0 * m.rebuildMs + 4.0 * 1.1 + 8.0 * 0.45) * 8.0;
  EXPECT_LT(with.costPerTime, 1.02 * best)
      << "with: " << with.costPerTime << " (" << with.aroundShare << " around, every "
      << with.meanInterval << " rebuilt), without: " << without.costPerTime;
  EXPECT_NEAR(with.aroundShare, 0.75, 0.02);
  EXPECT_NEAR(with.meanInterval, 4.0, 0.1);
  EXPECT_LT(with.costPerTime, 0.8 * without.costPerTime);
  EXPECT_EQ(without.aroundShare, 0.0) << "not offered, not taken";

  // A rebuild around the centre's targets dearer than their aging over two substeps (1.5 ms
  // against 1.39), bin 3's cheaper than a rebuild (1.35 ms, as measured on the H200 for M31's
  // 757,000): the plan rebuilds around bin 3's targets and refits the centre's after it, aged one
  // substep since (they lie in the cover). Held to age since the last rebuild, two substeps, the
  // centre's would cost 1.39 ms, and a rebuild before bin 3 (1.97 + 0.70) would look cheaper
  // than that (1.35 + 1.39).
  m.aroundMs = {1.1 * m.rebuildMs, 1.1 * m.rebuildMs, 1.1 * m.rebuildMs, 1.35, 1.5};
  const Outcome reset = runMachine(m, 4096);
  const double resetBest = (4.0 * m.rebuildMs + 4.0 * 1.35 + 8.0 * 0.695) * 8.0;
  EXPECT_LT(reset.costPerTime, 1.02 * resetBest)
      << reset.aroundShare << " around, every " << reset.meanInterval << " rebuilt";
  EXPECT_NEAR(reset.aroundShare, 0.25, 0.02);

  // Where a rebuild around the targets costs more than the aging it saves, or more than a
  // rebuild, it is not taken: once a kind to measure it, at the guess of a quarter of a rebuild.
  m.aroundMs.fill(1.1 * m.rebuildMs);
  const Outcome dear = runMachine(m, 4096);
  EXPECT_LE(dear.aroundShare, 5.0 / 4096.0) << "five kinds";
  EXPECT_LE(dear.costPerTime, 1.01 * without.costPerTime);
}

TEST(RebuildTuner, ATreeThatAgesBadlyIsProbedSeldom) {
  // One step of aging costs 20 rebuilds (an NFW sphere of 2²³ stepped by 1/8 on an H200: +31 ms
  // against 1.3). Every refit is a probe, and each costs what 20 rebuilds do: at the fixed
  // interval of kProbeAfter rebuilds they would take 60 % on top of rebuilding every time; held
  // to kProbeShare of the rebuilds between them, an eighth at most.
  Machine m;
  m.rebuildMs = 1.3;
  m.b = 20.0 * m.rebuildMs / (1e6 * m.dt);
  const int n = 8192;
  const Outcome tuned = runMachine(m, n), every = runMachine(m, n, 1);
  EXPECT_LE(tuned.costPerTime, (1.0 + RebuildTuner::kProbeShare) * every.costPerTime);
  EXPECT_GE(tuned.refits, 2u) << "probed again";
  EXPECT_LE(tuned.refits, std::uint64_t(n) / 150u);
}

TEST(RebuildTuner, ARebuildAroundTheTargetsIsChargedTheWalkItTakesBeyondAFreshOne) {
  // The centre's rebuild around its targets is cheap (0.45 ms against 1.97), but its walk takes
  // 1.2 ms more than a fresh one (outside the cover the tree aged): 1.65 ms in all, more than a
  // centre refit's aging (0.7). Charged only its stages it would be taken at every centre
  // substep; charged its walk too, it is not, and the plan is the one without it.
  Machine m = blockSteps8M();
  m.aroundMs = {1.1 * m.rebuildMs, 1.1 * m.rebuildMs, 1.1 * m.rebuildMs, 1.1 * m.rebuildMs, 0.45};
  m.aroundWalkMs = {0.0, 0.0, 0.0, 2.0, 1.2};
  const Outcome without = runMachine(m, 4096);
  m.around = true;
  const Outcome with = runMachine(m, 4096);
  EXPECT_LE(with.aroundShare, 5.0 / 4096.0) << "each kind tried once";
  EXPECT_LE(with.costPerTime, 1.01 * without.costPerTime);

  // Within kAroundLikeFresh of a fresh walk (5 % over it here) it walks as a fresh tree (noise,
  // or a first rebuild walked cold): nothing is charged beyond its stages, and it is taken as
  // where it walks exactly fresh.
  m.aroundWalkMs = {};
  const Outcome fresh = runMachine(m, 4096);
  m.aroundWalkMs = {0.0, 0.0, 0.0, 0.0, 0.05 * 2.17e5 * 6.4e-6};
  const Outcome near = runMachine(m, 4096);
  EXPECT_GT(fresh.aroundShare, 0.4);
  EXPECT_NEAR(near.aroundShare, fresh.aroundShare, 0.02);
}

TEST(RebuildTuner, AFirstRebuildWalkedColdIsCorrectedByFasterWalksAroundTheTargets) {
  RebuildTuner tuner;
  const double targets = 1e5, fresh = 1e-5, rebuildMs = 1.0;
  tuner.record(TreeChoice::Rebuild, 3, 0.0, 0.0, targets, 1.6 * targets * fresh, rebuildMs);
  // Faster than the cold estimate: a fresh walk, nothing charged beyond the stages.
  tuner.record(TreeChoice::AroundTargets, 3, 0.01, 0.0, targets, targets * fresh, 0.3);
  EXPECT_DOUBLE_EQ(tuner.state().aroundMs, 0.3);
  EXPECT_NEAR(tuner.state().predictedWalkMs, 1.6 * targets * fresh, 1e-12);
  tuner.record(TreeChoice::AroundTargets, 3, 0.02, 0.0, targets, targets * fresh, 0.3);
  EXPECT_NEAR(tuner.state().predictedWalkMs, 1.3 * targets * fresh, 1e-12) << "halfway there";
  // Slower than the (now 1.15) estimate by more than kAroundLikeFresh: the rest is its cost, and
  // the fresh estimate keeps.
  tuner.record(TreeChoice::AroundTargets, 3, 0.03, 0.0, targets, 1.5 * targets * fresh, 0.3);
  EXPECT_NEAR(tuner.state().aroundMs, 0.3 + (1.5 - 1.15) * targets * fresh, 1e-12);
  tuner.record(TreeChoice::AroundTargets, 3, 0.04, 0.0, targets, 1.5 * targets * fresh, 0.3);
  EXPECT_NEAR(tuner.state().predictedWalkMs, 1.15 * targets * fresh, 1e-12);
}

TEST(RebuildTuner, AProbeBySampleFitsTheAgingAndWaitsByItsOwnCost) {
  RebuildTuner tuner;
  const double fresh = 5.0, rebuild = 1.3;
  tuner.record(TreeChoice::Rebuild, 0, 0.0, 0.0, 1e6, fresh, rebuild);
  EXPECT_TRUE(tuner.probing()) << "no fit yet";
  // A refit probe that walks 20 rebuilds longer: the next probe waits 160 rebuilds.
  tuner.record(TreeChoice::Refit, 0, 0.125, 0.125, 1e6, fresh + 20.0 * rebuild, -1.0);
  EXPECT_EQ(tuner.state().probeAfter, 160);
  for (int k = 1; k <= 160; ++k) {
    EXPECT_FALSE(tuner.probing()) << k;
    tuner.record(TreeChoice::Rebuild, 0, 0.125 * (k + 1), 0.0, 1e6, fresh, rebuild);
  }
  EXPECT_TRUE(tuner.probing());
  // The probe by sample: 25 ms more at age 1/8, and the probe itself took 3.9 ms, three
  // rebuilds: the next one after kProbeAfter rebuilds again.
  tuner.recordProbe(0.125, 1e6, 25.0, 3.0 * rebuild);
  const RebuildTunerState& s = tuner.state();
  EXPECT_FALSE(tuner.probing());
  EXPECT_EQ(s.sampledProbes, 1u);
  EXPECT_EQ(s.samples, 2);
  EXPECT_EQ(s.refits, 1u);
  EXPECT_NE(s.fit.model, AgingModel::None);
  EXPECT_NEAR(s.fit.growth(0.125) * 1e6, 0.5 * (25.0 + 20.0 * rebuild), 1.0) << "both samples";
  EXPECT_EQ(s.probeAfter, RebuildTuner::kProbeAfter);
  // A dear one waits by its cost, as a refit's does.
  tuner.recordProbe(0.125, 1e6, 25.0, 40.0 * rebuild);
  EXPECT_EQ(tuner.state().probeAfter, 320);
  tuner.resetProbeWait();
  EXPECT_EQ(tuner.state().probeAfter, RebuildTuner::kProbeAfter);
}

TEST(RebuildTuner, ATreeThatDoesNotAgeIsRebuiltOnlyAfterTheLongestRun) {
  Machine m;
  m.b = 0.0;
  const Outcome o = runMachine(m, 10 * (RebuildTuner::kMaxRefits + 1));
  EXPECT_NEAR(o.meanInterval, RebuildTuner::kMaxRefits + 1, 1.0);
}

TEST(RebuildTuner, StateReportsTheFitAndItsPrediction) {
  RebuildTuner tuner;
  const Machine m;
  const Machine::Kind k = m.cycle[0];
  double age = 0.0;
  for (int i = 0; i < 6; ++i) {
    const double extra = m.extraMs(k, age);
    tuner.record(i == 0 ? TreeChoice::Rebuild : TreeChoice::Refit, k.kind, i * m.dt, age, k.targets,
                 k.targets * k.msPerTarget + extra, m.rebuildMs);
    age += m.dt;
  }
  const RebuildTunerState& s = tuner.state();
  EXPECT_EQ(s.rebuilds, 1u);
  EXPECT_EQ(s.refits, 5u);
  EXPECT_EQ(s.evaluations, 6);
  EXPECT_EQ(s.samples, 5);
  EXPECT_EQ(s.fit.model, AgingModel::Linear);
  EXPECT_NEAR(s.fit.b, m.b, 1e-6 * m.b);
  EXPECT_NEAR(s.predictedWalkMs, s.measuredWalkMs, 1e-9 * s.measuredWalkMs);
  EXPECT_DOUBLE_EQ(s.rebuildMs, m.rebuildMs);
  EXPECT_NEAR(s.targetsPerTime, k.targets / m.dt, 1e-6 * k.targets / m.dt);
  const double optimum = std::sqrt(2.0 * m.rebuildMs / (k.targets / m.dt * m.b));
  EXPECT_NEAR(s.bestInterval, optimum, 0.01 * optimum);
}

// ---- Group splitting --------------------------------------------------------------------------

TEST(GroupTuner, CandidatesHalveDownToTheSmallest) {
  EXPECT_EQ(GroupTuner::groupSize(64, 0), 64);
  EXPECT_EQ(GroupTuner::groupSize(64, 1), 32);
  EXPECT_EQ(GroupTuner::groupSize(64, 3), 8);
  EXPECT_EQ(GroupTuner::groupSize(64, 4), 4);
  EXPECT_EQ(GroupTuner::groupSize(32, 4), 4) << "not below kSmallest";
  EXPECT_EQ(GroupTuner::groupSize(2, 2), 2) << "nor above N_group";
  EXPECT_EQ(GroupTuner::groupSize(128, 9), 8) << "the last candidate at most";
  EXPECT_EQ(GroupTuner::candidates(64), 5);
  EXPECT_EQ(GroupTuner::candidates(8), 2) << "8 and 4: no size twice";
  EXPECT_EQ(GroupTuner::candidates(4), 1);
  EXPECT_EQ(GroupTuner::candidates(1), 1);
}

namespace {

/// Runs `evaluations` of one kind whose walk costs `cost[c]` per target with candidate c;
/// returns how often each candidate was taken.
std::array<int, GroupTuner::kCandidates> takeTurns(GroupTuner& t, int kind,
                                                   const std::array<double, 5>& cost,
                                                   int evaluations) {
  std::array<int, GroupTuner::kCandidates> taken{};
  for (int i = 0; i < evaluations; ++i) {
    const int c = t.choose(kind, 64);
    ++taken[c];
    t.record(kind, c, cost[c], 64);
  }
  return taken;
}

}  // namespace

TEST(GroupTuner, SettlesOnTheFastestSizePerKind) {
  GroupTuner t;
  // Kind 0 (every particle): the full size is fastest; kind 5 (the centre's few): N_group / 4.
  const auto all = takeTurns(t, 0, {1.0, 1.3, 1.8, 2.5, 3.0}, 320);
  const auto centre = takeTurns(t, 5, {4.0, 2.0, 1.2, 1.5, 2.0}, 320);
  EXPECT_EQ(t.best(0), 0);
  EXPECT_EQ(t.best(5), 2);
  // The first pass stops at the first slower size; then retries are one in kRetry.
  EXPECT_LE(all[1], 2 + 320 / GroupTuner::kRetry);
  EXPECT_EQ(all[2] + all[3] + all[4], 0) << "kind 0 never tried beyond the first slower size";
  EXPECT_GE(centre[2], 320 - 3 - 320 / GroupTuner::kRetry);
}

TEST(GroupTuner, TriesOnlyDistinctSizes) {
  GroupTuner t;
  for (int i = 0; i < 200; ++i) {
    const int c = t.choose(0, 8);
    ASSERT_LT(c, 2) << "N_group 8 has the sizes 8 and 4 only";
    t.record(0, c, c == 1 ? 1.0 : 2.0, 8);
  }
  EXPECT_EQ(t.best(0), 1);
}

TEST(GroupTuner, FollowsTheBestSizeWhenItMoves) {
  GroupTuner t;
  takeTurns(t, 3, {1.0, 1.5, 2.0, 3.0, 4.0}, 64);
  ASSERT_EQ(t.best(3), 0);
  // The particles concentrate: halving the groups now pays, and the retries find it.
  takeTurns(t, 3, {2.0, 1.0, 1.4, 3.0, 4.0}, 4 * GroupTuner::kRetry);
  EXPECT_EQ(t.best(3), 1);
}
