// Force accuracy of the group tree walk against exact direct summation, and the trends each
// MAC and the quadrupole toggle promise.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/common/gravity.h"
#include "sim/rng.h"
#include "test_support.h"

using namespace bhviz;
using namespace bhviz::sim;

namespace {

using test::plummer20k;

SimParams params(MacKind mac, float theta, float macParam = 0.0f, bool quad = true) {
  SimParams p;
  p.mac = mac;
  p.theta = theta;
  p.macParam = macParam;
  p.quadrupole = quad;
  p.softening = 0.05f;
  return p;
}

}  // namespace

TEST(Interactions, QuadrupoleTermMatchesTheExpansionOfAFarCluster) {
  // A random cluster of size ~s seen from distance d: the monopole error falls as (s/d)², the
  // quadrupole-corrected error as (s/d)³.
  Rng rng(3);
  std::vector<Vec4> src(50);
  double m = 0, cx = 0, cy = 0, cz = 0;
  for (auto& s : src) {
    s = {float(rng.uniform(-1, 1)), float(0.5 * rng.uniform(-1, 1)),
         float(0.2 * rng.uniform(-1, 1)), float(rng.uniform(0.5, 1.5))};
    m += s.w, cx += s.w * s.x, cy += s.w * s.y, cz += s.w * s.z;
  }
  cx /= m, cy /= m, cz /= m;
  Quadrupole q;
  for (const auto& s : src) {
    const double dx = s.x - cx, dy = s.y - cy, dz = s.z - cz;
    q.xx += float(s.w * dx * dx), q.yy += float(s.w * dy * dy), q.zz += float(s.w * dz * dz);
    q.xy += float(s.w * dx * dy), q.xz += float(s.w * dx * dz), q.yz += float(s.w * dy * dz);
  }
  const Vec4 comMass{float(cx), float(cy), float(cz), float(m)};
  double prevMono = 0, prevQuad = 0;
  for (float d : {8.0f, 16.0f, 32.0f}) {
    const Vec3 xi{d * 0.6f, d * 0.48f, d * 0.64f};
    Vec4 exact{}, mono{}, quad{};
    for (const auto& s : src) p2p(xi, s, 0.0f, exact);
    m2p(xi, comMass, q, false, 0.0f, mono);
    m2p(xi, comMass, q, true, 0.0f, quad);
    auto err = [&](const Vec4& a) {
      return std::sqrt((a.x - exact.x) * (a.x - exact.x) + (a.y - exact.y) * (a.y - exact.y) +
                       (a.z - exact.z) * (a.z - exact.z)) /
             std::sqrt(exact.x * exact.x + exact.y * exact.y + exact.z * exact.z);
    };
    const double em = err(mono), eq = err(quad);
    EXPECT_LT(eq, 0.2 * em) << "d = " << d;
    // The quadrupole removes most of the monopole's potential error; the rest is octupole, ~s/d
    // smaller.
    EXPECT_NEAR(quad.w, exact.w, 0.1 * std::fabs(exact.w - mono.w));
    if (prevMono > 0) {
      EXPECT_NEAR(prevMono / em, 4.0, 1.0) << "monopole error should fall as d^-2";
      EXPECT_NEAR(prevQuad / eq, 8.0, 2.5) << "quadrupole error should fall as d^-3";
    }
    prevMono = em, prevQuad = eq;
  }
}

TEST(Interactions, TracelessFormEqualsTheSecondMomentExpansionWithSoftening) {
  // m2pQuadrupole evaluates φ = −M/R − ½(3 rᵀQr/R⁵ − tr Q/R³) and its gradient through the
  // traceless P = 3Q − tr(Q)·I; written out here with Q in double, as the expansion reads.
  Rng rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    Quadrupole q;
    double Q[3][3] = {};
    for (int k = 0; k < 5; ++k) {  // Σ m d dᵀ: a genuine second-moment tensor
      const double m = rng.uniform(0.1, 1.0);
      const double d[3] = {rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)};
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) Q[a][b] += m * d[a] * d[b];
    }
    q = {float(Q[0][0]), float(Q[1][1]), float(Q[2][2]),
         float(Q[0][1]), float(Q[0][2]), float(Q[1][2])};
    const Vec4 comMass{float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)),
                       float(rng.uniform(-1, 1)), float(rng.uniform(1, 3))};
    const double dist = rng.uniform(2.0, 6.0);
    const double dir[3] = {rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)};
    const double len = std::sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    const Vec3 xi{float(comMass.x + dist * dir[0] / len), float(comMass.y + dist * dir[1] / len),
                  float(comMass.z + dist * dir[2] / len)};
    const double eps2 = 0.5;  // large, so that the softening's trace term matters
    const double r[3] = {double(xi.x) - comMass.x, double(xi.y) - comMass.y,
                         double(xi.z) - comMass.z};
    const double R2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + eps2, R = std::sqrt(R2);
    double qr[3] = {}, rqr = 0, tr = Q[0][0] + Q[1][1] + Q[2][2];
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) qr[a] += Q[a][b] * r[b];
      rqr += r[a] * qr[a];
    }
    const double R3 = R2 * R, R5 = R3 * R2, R7 = R5 * R2, M = comMass.w;
    double want[4];
    for (int a = 0; a < 3; ++a) {
      want[a] = -M * r[a] / R3 + 3 * qr[a] / R5 - 7.5 * rqr * r[a] / R7 + 1.5 * tr * r[a] / R5;
    }
    want[3] = -M / R - 0.5 * (3 * rqr / R5 - tr / R3);
    const double wantQuad = 0.5 * std::fabs(3 * rqr / R5 - tr / R3);  // size of the quadrupole term

    Vec4 got{}, noSoftTrace{};
    const QuadSource source = quadSource(q, float(eps2));
    m2pQuadrupole(xi, comMass, source, float(eps2), got);
    QuadSource dropped = source;
    dropped.softTrace = 0.0f;
    m2pQuadrupole(xi, comMass, dropped, float(eps2), noSoftTrace);

    const double aNorm = std::sqrt(want[0] * want[0] + want[1] * want[1] + want[2] * want[2]);
    const double aErr =
        std::sqrt((got.x - want[0]) * (got.x - want[0]) + (got.y - want[1]) * (got.y - want[1]) +
                  (got.z - want[2]) * (got.z - want[2]));
    EXPECT_LT(aErr / aNorm, 2e-6) << "trial " << trial;
    EXPECT_LT(std::fabs(got.w - want[3]), 2e-6 * std::fabs(want[3])) << "trial " << trial;
    // The softening's trace term is not negligible here: dropping it moves the potential by
    // more than 1 % of the quadrupole term, far beyond the tolerance above (so that comparison
    // can fail).
    EXPECT_GT(std::fabs(noSoftTrace.w - want[3]), 1e-2 * wantQuad) << "trial " << trial;
  }
}

TEST(Interactions, SelfInteractionContributesNothing) {
  Vec4 acc{};
  p2p(Vec3{1, 2, 3}, Vec4{1, 2, 3, 5}, 0.01f, acc);
  EXPECT_EQ(acc.x, 0.0f);
  EXPECT_EQ(acc.w, 0.0f);
}

TEST(TreeForces, PlummerThetaHalfWithQuadrupoleMeetsTheAccuracyBounds) {
  for (MacKind mac : {MacKind::BarnesHut, MacKind::Bonsai}) {
    const test::Accuracy a = test::measureAccuracy(plummer20k(), params(mac, 0.5f));
    RecordProperty(std::string(toString(mac)) + "_median", std::to_string(a.error.median));
    EXPECT_LE(a.error.median, 1e-3) << toString(mac);
    EXPECT_LE(a.error.p99, 1e-2) << toString(mac);
    EXPECT_GT(a.error.median, 1e-8) << "a tree code at θ = 0.5 cannot be exact";
  }
}

TEST(TreeForces, ErrorFallsAsThetaFallsAndCostRises) {
  for (MacKind mac : {MacKind::BarnesHut, MacKind::Bonsai}) {
    double prevError = INFINITY, prevCost = 0;
    for (float theta : {0.9f, 0.7f, 0.5f, 0.35f}) {
      const test::Accuracy a = test::measureAccuracy(plummer20k(), params(mac, theta));
      EXPECT_LT(a.error.median, prevError) << toString(mac) << " θ = " << theta;
      EXPECT_GT(a.interactionsPerParticle, prevCost) << toString(mac) << " θ = " << theta;
      prevError = a.error.median, prevCost = a.interactionsPerParticle;
    }
  }
}

TEST(TreeForces, QuadrupoleIsMoreAccurateThanMonopole) {
  for (float theta : {0.4f, 0.7f}) {
    const test::Accuracy quad =
        test::measureAccuracy(plummer20k(), params(MacKind::Bonsai, theta, 0, true));
    const test::Accuracy mono =
        test::measureAccuracy(plummer20k(), params(MacKind::Bonsai, theta, 0, false));
    EXPECT_LT(quad.error.median, 0.5 * mono.error.median) << "θ = " << theta;
    EXPECT_LT(quad.error.p99, mono.error.p99) << "θ = " << theta;
  }
}

TEST(TreeForces, MultipoleMacErrorFallsWithItsTolerance) {
  double prev = INFINITY;
  for (float delta : {1e-2f, 1e-3f, 1e-4f, 1e-5f}) {
    const test::Accuracy a =
        test::measureAccuracy(plummer20k(), params(MacKind::Multipole, 0.5f, delta));
    EXPECT_LT(a.error.median, prev) << "Δ = " << delta;
    prev = a.error.median;
  }
  EXPECT_LE(prev, 1e-4);
}

TEST(TreeForces, AccelerationMacErrorFallsWithAlphaAfterTheFirstEvaluation) {
  double prev = INFINITY;
  for (float alpha : {2e-2f, 2e-3f, 2e-4f}) {
    const test::Accuracy a =
        test::measureAccuracy(plummer20k(), params(MacKind::Acceleration, 0.5f, alpha), true);
    EXPECT_LT(a.error.median, prev) << "α = " << alpha;
    prev = a.error.median;
  }
  EXPECT_LE(prev, 1e-4);
}

TEST(TreeForces, AccelerationMacFallsBackToThetaOnTheFirstEvaluation) {
  const Particles& p = plummer20k();
  const Particles acc = test::treeForces(p, params(MacKind::Acceleration, 0.5f, 2e-3f));
  const Particles bh = test::treeForces(p, params(MacKind::BarnesHut, 0.5f));
  ASSERT_EQ(acc.size(), bh.size());
  for (std::size_t i = 0; i < acc.size(); i += 97) {
    ASSERT_EQ(acc.accPot[i].x, bh.accPot[i].x);
    ASSERT_EQ(acc.accPot[i].w, bh.accPot[i].w);
  }
}

TEST(TreeForces, PotentialMatchesDirectSummation) {
  const Particles out = test::treeForces(plummer20k(), params(MacKind::Bonsai, 0.5f));
  const std::vector<std::uint32_t> targets = sampleIndices(out.size(), 500, 9);
  const std::vector<Accel4d> ref = directSum(out, targets, 0.05);
  for (std::size_t t = 0; t < targets.size(); ++t) {
    EXPECT_NEAR(out.accPot[targets[t]].w, ref[t][3], 1e-3 * std::fabs(ref[t][3]));
  }
}

TEST(TreeForces, SmallGroupsAndLeavesGiveTheSameAccuracy) {
  // N_group = 1 and N_leaf = 1 is the classic per-particle Barnes–Hut walk.
  SimParams p = params(MacKind::BarnesHut, 0.5f);
  p.nGroup = 1;
  p.nLeaf = 1;
  const test::Accuracy fine = test::measureAccuracy(plummer20k(), p);
  EXPECT_LE(fine.error.median, 1e-3);
  EXPECT_LE(fine.error.p99, 1e-2);
}
