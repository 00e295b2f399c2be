// The accuracy meter and sweep (sim/accuracy.h), the CPU backend's interaction-list export, and
// the headless --sweep CSV.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/core/cli.h"
#include "app/core/sweep.h"
#include "process_support.h"
#include "sim/accuracy.h"
#include "sim/common/gravity.h"
#include "test_support.h"

using namespace bhviz;
using namespace bhviz::sim;

namespace {

using test::plummer20k;

SimParams params(MacKind mac, float theta) {
  SimParams p;
  p.mac = mac;
  p.theta = theta;
  p.softening = 0.05f;
  return p;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST(InteractionExport, ListMatchesTheWalkCountsAndForcesBitForBit) {
  const Particles in = makePlummer(4000, 11);
  // The list says which cells a group takes, not how: rebuilt below cell by cell (M2P), the
  // forces are the bits of a walk that expands none of them about the group.
  SimParams p = params(MacKind::Bonsai, 0.6f);
  p.expansionRatio = 0.0f;
  CpuBackend backend;
  backend.upload(in);
  backend.computeForces(Clock{0.0, 0, 0, p.dtMax}, p, ForceTargets::All, false);
  const Tree& tree = backend.tree();
  const Groups& groups = backend.groups();
  const Particles& s = backend.particles();
  ASSERT_GT(groups.size(), 10u);

  // Every group's exported counts add up to the evaluation's.
  InteractionCounts sum;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto gi = backend.interactionsOfGroup(g);
    sum.cell += gi.counts.cell, sum.particle += gi.counts.particle,
        sum.targets += gi.counts.targets;
  }
  EXPECT_EQ(sum.cell, backend.profile().interactions.cell);
  EXPECT_EQ(sum.particle, backend.profile().interactions.particle);
  EXPECT_EQ(sum.targets, backend.profile().interactions.targets);

  for (std::size_t g : {std::size_t{0}, groups.size() / 3, groups.size() - 1}) {
    // Looked up through a particle id of the group.
    const std::uint32_t id = s.id[groups.first[g] + groups.count[g] / 2];
    const auto gi = backend.interactionListOf(id);
    ASSERT_EQ(gi.group, g);
    EXPECT_FALSE(gi.list.cells.empty());
    EXPECT_FALSE(gi.list.leaves.empty());

    // The walk on that group alone (only its particles active).
    std::vector<std::uint8_t> active(s.size(), 0);
    for (std::uint32_t i = groups.first[g]; i < groups.first[g] + groups.count[g]; ++i)
      active[i] = 1;
    Groups one;
    one.first = {groups.first[g]};
    one.count = {groups.count[g]};
    one.box = {groups.box[g]};
    one.accMin = {groups.accMin[g]};
    std::vector<Vec4> acc(s.size(), Vec4{});
    const cpu::WalkSettings ws{MacSetup{MacCode::Bonsai, p.theta, 0.0f}, p.quadrupole, p.softening};
    const InteractionCounts walked = cpu::walkGroups(tree, one, s.posMass, active, ws, acc);
    EXPECT_EQ(gi.counts.cell, walked.cell);
    EXPECT_EQ(gi.counts.particle, walked.particle);
    EXPECT_EQ(gi.counts.targets, walked.targets);

    // Rebuilt from the exported list with the same per-element math: bit for bit.
    const float eps2 = p.softening * p.softening;
    for (std::uint32_t i = groups.first[g]; i < groups.first[g] + groups.count[g]; ++i) {
      const Vec3 xi = xyz(s.posMass[i]);
      Vec4 a{};
      for (std::uint32_t c : gi.list.cells) m2p(xi, tree.comMass[c], tree.quad[c], true, eps2, a);
      for (std::uint32_t leaf : gi.list.leaves) {
        for (std::uint32_t j = tree.first[leaf]; j < tree.first[leaf] + tree.count[leaf]; ++j) {
          p2p(xi, s.posMass[j], eps2, a);
        }
      }
      ASSERT_EQ(a.x, acc[i].x) << "particle " << i;
      ASSERT_EQ(a.y, acc[i].y);
      ASSERT_EQ(a.z, acc[i].z);
      ASSERT_EQ(a.w, acc[i].w);
      ASSERT_EQ(a.x, s.accPot[i].x);  // and the full evaluation's
      ASSERT_EQ(a.w, s.accPot[i].w);
    }
  }
  EXPECT_THROW(backend.interactionsOfGroup(groups.size()), std::out_of_range);
  EXPECT_THROW(backend.interactionListOf(4000), std::out_of_range);
}

TEST(AccuracyMeter, EqualsAnOfflineComputationOnTheSameState) {
  const Particles in = makePlummer(5000, 3);
  const SimParams p = params(MacKind::BarnesHut, 0.7f);
  const AccuracyReference ref = makeReference(in, p.softening, 500, 9);
  CpuBackend scratch;
  const AccuracySample s = measureAccuracy(scratch, in, p, ref, false);
  EXPECT_GT(s.msPerForce, 0.0);

  // By hand: the same sample of the input, its exact forces, the tree forces of a fresh backend
  // (evaluated twice: the far cells' expansion by mass needs |a_old|, which the input lacks).
  const std::vector<std::uint32_t> idx = sampleIndices(in.size(), 500, 9);
  const std::vector<Accel4d> exact = directSum(in, idx, p.softening);
  InteractionCounts counts;
  ASSERT_GT(p.expansionBudget, 0.0f);
  const Particles out = test::treeForces(in, p, true, &counts);
  std::unordered_map<std::uint32_t, std::uint32_t> where;
  for (std::uint32_t k = 0; k < out.size(); ++k) where[out.id[k]] = k;
  std::vector<std::uint32_t> targets;
  for (std::uint32_t i : idx) targets.push_back(where.at(in.id[i]));
  const ForceError e = forceError(out, targets, exact);
  EXPECT_EQ(s.error.median, e.median);
  EXPECT_EQ(s.error.p99, e.p99);
  EXPECT_EQ(s.error.max, e.max);
  EXPECT_EQ(s.interactionsPerParticle,
            double(counts.cell + counts.particle) / double(counts.targets));

  SimParams other = p;
  other.softening = 0.1f;
  EXPECT_THROW(measureAccuracy(scratch, in, other, ref, false), std::invalid_argument);
}

TEST(AccuracySweep, ErrorFallsWithThetaForEveryMac) {
  const Particles& in = plummer20k();
  const SimParams base = params(MacKind::Bonsai, 0.5f);
  const AccuracyReference ref = makeReference(in, base.softening, 1000, 7);
  const std::vector<float> thetas = sweepThetas(0.3f, 0.9f, 0.2f);
  ASSERT_EQ(thetas.size(), 4u);
  const std::vector<SweepPoint> pts = sweep(in, base, makeCpuBackend, allMacs(), thetas, ref);
  ASSERT_EQ(pts.size(), 16u);
  for (std::size_t m = 0; m < 4; ++m) {
    for (std::size_t k = 1; k < thetas.size(); ++k) {
      const SweepPoint& lo = pts[m * 4 + k - 1];  // smaller θ
      const SweepPoint& hi = pts[m * 4 + k];
      EXPECT_EQ(lo.mac, allMacs()[m]);
      EXPECT_LT(lo.param, hi.param);
      EXPECT_LT(lo.s.error.median, hi.s.error.median)
          << toString(lo.mac) << " at params " << lo.param << " and " << hi.param;
      EXPECT_GT(lo.s.interactionsPerParticle, hi.s.interactionsPerParticle);
    }
  }
  EXPECT_FLOAT_EQ(sweepParam(MacKind::Multipole, 0.5f), 1e-4f);
  EXPECT_FLOAT_EQ(sweepParam(MacKind::Acceleration, 0.5f), 2e-3f);
  EXPECT_FLOAT_EQ(sweepParam(MacKind::BarnesHut, 0.7f), 0.7f);
}

TEST(AccuracySweep, ThetaRanges) {
  const std::vector<float> t = app::parseSweepSpec("theta=0.2:1.0:0.1");
  ASSERT_EQ(t.size(), 9u);
  EXPECT_FLOAT_EQ(t.front(), 0.2f);
  EXPECT_FLOAT_EQ(t.back(), 1.0f);
  EXPECT_EQ(app::parseSweepSpec("theta=0.5:0.5:0.1").size(), 1u);
  for (const char* bad : {"0.2:1.0:0.1", "theta=0.2:1.0", "theta=a:1:0.1", "theta=0:1:0.1",
                          "theta=1:0.5:0.1", "theta=0.2:2:0.1", "theta=0.2:1:0", "theta=0.2:1:-1",
                          "theta=0.2:1:0.1:3", "theta=0.1:1.5:0.000001"}) {
    EXPECT_THROW(app::parseSweepSpec(bad), app::UsageError) << bad;
  }
}

TEST(SweepCli, WritesOneRowPerMacAndParamWithTheExactHeader) {
  test::TempDir dir;
  const auto csv = dir.path / "sweep.csv";
  const test::Process p = test::runBhviz(
      "--headless --quiet --backend cpu --scenario plummer --n 3000 --seed 2 --sweep "
      "theta=0.4:0.8:0.2 --mac all --out " +
      csv.string());
  ASSERT_EQ(p.status, 0) << p.err;
  const std::vector<std::string> rows = lines(test::readText(csv));
  ASSERT_EQ(rows.size(), 1u + 4u * 3u);
  EXPECT_EQ(rows[0], "mac,param,median_error,p99_error,ms_per_force,interactions_per_particle");
  const char* macs[] = {"bh", "bonsai", "multipole", "acceleration"};
  for (std::size_t k = 1; k < rows.size(); ++k) {
    EXPECT_EQ(rows[k].substr(0, rows[k].find(',')), macs[(k - 1) / 3]) << rows[k];
    EXPECT_EQ(std::count(rows[k].begin(), rows[k].end(), ','), 5) << rows[k];
  }
  EXPECT_EQ(rows[1].substr(0, 7), "bh,0.4,");

  const test::Process one = test::runBhviz(
      "--headless --quiet --backend cpu --scenario plummer "
      "--n 2000 --sweep theta=0.5:0.6:0.1 --mac multipole "
      "--out " +
      csv.string());
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(lines(test::readText(csv)).size(), 3u);
}

TEST(SweepCli, BadSpecsExitTwoWithOneLine) {
  test::TempDir dir;
  const std::string out = " --out " + (dir.path / "s.csv").string();
  for (const std::string& args : std::vector<std::string>{
           "--headless --sweep theta=1:0.2:0.1" + out, "--headless --sweep theta=0.2:1" + out,
           "--headless --sweep phi=0.2:1:0.1" + out, "--headless --sweep theta=0.2:1:0.1",
           "--headless --mac all", "--headless --mac all --steps 1",
           "--headless --sweep theta=0.2:1:0.1 --mac nope" + out,
           "--headless --sweep theta=0.2:1:0.1 --theta 0.3" + out, "--headless --out x.csv",
           "--headless --sweep theta=0.2:1:0.1 --out /nonexistent/dir/s.csv"}) {
    const test::Process p = test::runBhviz(args);
    EXPECT_EQ(p.status, 2) << args;
    EXPECT_EQ(lines(p.err).size(), 1u) << args << ": " << p.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path / "s.csv")) << args;
  }
}
