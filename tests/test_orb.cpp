// The ORB's CPU twin on one process (sums over ranks: nothing to add): cuts checked by hand,
// domains that tile the box, weights balanced to the tolerance, any K.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "sim/dist/orb.h"
#include "sim/ic/initial_conditions.h"

using namespace bhviz::sim;
using namespace bhviz::sim::dist;

namespace {

const SumOverRanks kOneProcess = [](std::vector<std::uint64_t>&) {};

Box boundsOf(const std::vector<Vec4>& p) {
  Box b;
  for (const Vec4& q : p) grow(b, Vec3{q.x, q.y, q.z});
  return b;
}

bool inside(const Vec4& p, const Box& b) {
  return p.x >= b.lo.x && p.x <= b.hi.x && p.y >= b.lo.y && p.y <= b.hi.y && p.z >= b.lo.z &&
         p.z <= b.hi.z;
}

double volume(const Box& b) {
  return double(b.hi.x - b.lo.x) * double(b.hi.y - b.lo.y) * double(b.hi.z - b.lo.z);
}

}  // namespace

// Eight particles on the x axis at 0.5, 1.5, …, 7.5 in a box [0, 8] × [0, 1]²: two domains cut
// x at the middle of the 4th and 5th particle's gap, four domains cut each half again; x is
// the longest axis throughout.
TEST(Orb, HandCheckedCutsOnALine) {
  std::vector<Vec4> p;
  for (int i = 0; i < 8; ++i) p.push_back({i + 0.5f, 0.5f, 0.5f, 1.0f});
  const std::vector<std::uint64_t> w(8, 1);
  const Box root{{0, 0, 0}, {8, 1, 1}};
  {
    HostOrbParticles orb(p, w);
    const OrbResult r = decompose(2, root, orb, kOneProcess);
    ASSERT_EQ(r.domains.size(), 2u);
    EXPECT_GT(r.domains[0].hi.x, 3.5f);
    EXPECT_LE(r.domains[0].hi.x, 4.5f);
    EXPECT_EQ(r.domains[1].lo.x, r.domains[0].hi.x);
    EXPECT_EQ(r.weight, (std::vector<std::uint64_t>{4, 4}));
    EXPECT_EQ(r.levels, 1);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(orb.domain()[i], i < 4 ? 0 : 1) << i;
  }
  {
    HostOrbParticles orb(p, w);
    const OrbResult r = decompose(4, root, orb, kOneProcess);
    EXPECT_EQ(r.levels, 2);
    EXPECT_EQ(r.weight, (std::vector<std::uint64_t>(4, 2)));
    for (int i = 0; i < 8; ++i) EXPECT_EQ(orb.domain()[i], i / 2) << i;
  }
  {
    // Three ranks: ⌊3/2⌋ = 1 low, 2 high; the low third then stays, the high part splits.
    std::vector<Vec4> six(p.begin(), p.begin() + 6);
    const std::vector<std::uint64_t> w6(6, 1);
    HostOrbParticles orb(six, w6);
    const OrbResult r = decompose(3, Box{{0, 0, 0}, {6, 1, 1}}, orb, kOneProcess);
    EXPECT_EQ(r.weight, (std::vector<std::uint64_t>(3, 2)));
    for (int i = 0; i < 6; ++i) EXPECT_EQ(orb.domain()[i], i / 2) << i;
  }
}

// The cut follows the weight, not the count: one heavy particle balances seven light ones.
TEST(Orb, WeightsNotCounts) {
  std::vector<Vec4> p;
  for (int i = 0; i < 8; ++i) p.push_back({i + 0.5f, 0.5f, 0.5f, 1.0f});
  std::vector<std::uint64_t> w(8, 1);
  w[7] = 7;
  HostOrbParticles orb(p, w);
  const OrbResult r = decompose(2, Box{{0, 0, 0}, {8, 1, 1}}, orb, kOneProcess);
  EXPECT_EQ(r.weight, (std::vector<std::uint64_t>{7, 7}));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(orb.domain()[i], i < 7 ? 0 : 1) << i;
}

// The longest axis is cut: a box long in z is cut in z.
TEST(Orb, CutsTheLongestAxis) {
  std::vector<Vec4> p;
  for (int i = 0; i < 8; ++i) p.push_back({0.5f, 0.5f, i + 0.5f, 1.0f});
  const std::vector<std::uint64_t> w(8, 1);
  HostOrbParticles orb(p, w);
  const OrbResult r = decompose(2, Box{{0, 0, 0}, {1, 1, 8}}, orb, kOneProcess);
  EXPECT_EQ(r.domains[0].hi.x, 1.0f);
  EXPECT_GT(r.domains[0].hi.z, 3.5f);
  EXPECT_LE(r.domains[0].hi.z, 4.5f);
}

// K = 1..8 on a Plummer sphere with random integer weights: the domains tile the root (volumes
// add up, no two overlap in more than a face), each particle lies in its own domain, and the
// weights are balanced to the tolerance and a particle's weight.
TEST(Orb, DomainsTileTheBoxAndBalanceTheWeight) {
  const Particles s = makePlummer(20000, 5);
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::uint64_t> draw(1, 100);
  std::vector<std::uint64_t> w(s.size());
  for (auto& x : w) x = draw(rng);
  const Box root = boundsOf(s.posMass);
  for (int K = 1; K <= 8; ++K) {
    SCOPED_TRACE(K);
    HostOrbParticles orb(s.posMass, w);
    const OrbResult r = decompose(K, root, orb, kOneProcess);
    ASSERT_EQ(static_cast<int>(r.domains.size()), K);
    double sum = 0.0;
    for (int a = 0; a < K; ++a) {
      sum += volume(r.domains[a]);
      for (int b = a + 1; b < K; ++b) {
        Box i;
        i.lo = vmax(r.domains[a].lo, r.domains[b].lo);
        i.hi = vmin(r.domains[a].hi, r.domains[b].hi);
        const bool proper = i.lo.x < i.hi.x && i.lo.y < i.hi.y && i.lo.z < i.hi.z;
        EXPECT_FALSE(proper) << "domains " << a << " and " << b << " overlap";
      }
    }
    EXPECT_NEAR(sum, volume(root), 1e-5 * volume(root));
    std::vector<std::uint64_t> counted(static_cast<std::size_t>(K), 0);
    for (std::size_t i = 0; i < s.size(); ++i) {
      const int d = orb.domain()[i];
      ASSERT_TRUE(inside(s.posMass[i], r.domains[d])) << "particle " << i << " domain " << d;
      counted[static_cast<std::size_t>(d)] += w[i];
    }
    EXPECT_EQ(counted, r.weight);
    EXPECT_LT(r.imbalance(), 1.01);
  }
}

// Every particle at one point: no cut can separate them; the decomposition still ends, every
// particle has a domain and the weights add up.
TEST(Orb, DegenerateBoxEnds) {
  const std::vector<Vec4> p(100, Vec4{1, 1, 1, 1});
  const std::vector<std::uint64_t> w(100, 1);
  HostOrbParticles orb(p, w);
  const OrbResult r = decompose(5, Box{{1, 1, 1}, {1, 1, 1}}, orb, kOneProcess);
  std::uint64_t total = 0;
  for (std::uint64_t x : r.weight) total += x;
  EXPECT_EQ(total, 100u);
  for (int d : orb.domain()) EXPECT_TRUE(d >= 0 && d < 5);
}
