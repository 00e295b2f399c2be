// The ORB's CPU twin on one process (sums over ranks: nothing to add): cuts checked by hand,
// domains that tile the box, weights balanced to the tolerance, any K.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

float& component(Vec3& v, int axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }
float component(const Vec3& v, int axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }

/// Random integer weights 1..100, one per particle.
std::vector<std::uint64_t> randomWeights(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint64_t> draw(1, 100);
  std::vector<std::uint64_t> w(n);
  for (auto& x : w) x = draw(rng);
  return w;
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

// No weights are unit weights: the same cuts, domains and sums as an array of ones (the leader's
// start cut and a CPU rank's first cuts pass none).
TEST(Orb, NoWeightsAreUnitWeights) {
  const Particles s = makePlummer(5000, 9);
  const Box root = boundsOf(s.posMass);
  for (int K : {2, 3, 5}) {
    SCOPED_TRACE(K);
    HostOrbParticles ones(s.posMass, std::vector<std::uint64_t>(s.size(), 1));
    HostOrbParticles none(s.posMass, {});
    const OrbResult a = decompose(K, root, ones, kOneProcess);
    const OrbResult b = decompose(K, root, none, kOneProcess);
    EXPECT_EQ(a.weight, b.weight);
    EXPECT_EQ(ones.domain(), none.domain());
    ASSERT_EQ(a.cuts.cut.size(), b.cuts.cut.size());
    for (std::size_t c = 0; c < a.cuts.cut.size(); ++c) {
      EXPECT_EQ(a.cuts.cut[c].position, b.cuts.cut[c].position) << c;
    }
  }
  EXPECT_THROW(HostOrbParticles(s.posMass, std::vector<std::uint64_t>(3, 1)),
               std::invalid_argument);
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
  const std::vector<std::uint64_t> w = randomWeights(s.size(), 11);
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

// The cuts a decomposition returns place every particle where the decomposition did, and any
// other point (one that moved, inside the box or beyond it) in the one domain whose box holds
// it, or, outside the box, in a domain on its side of every cut it meets: what a rank's strays
// are sent by (ForceParts::strays).
TEST(Orb, CutsPlaceAnyPointInOneDomain) {
  const Particles s = makePlummer(20000, 7);
  const std::vector<std::uint64_t> w = randomWeights(s.size(), 13);
  std::mt19937_64 rng(13);
  const Box root = boundsOf(s.posMass);
  for (int K = 1; K <= 8; ++K) {
    SCOPED_TRACE(K);
    HostOrbParticles orb(s.posMass, w);
    const OrbResult r = decompose(K, root, orb, kOneProcess);
    const OrbCuts& c = r.cuts;
    ASSERT_EQ(c.ranks, K);
    EXPECT_EQ(c.levels(), r.levels);
    for (std::size_t i = 0; i < s.size(); ++i) {
      ASSERT_EQ(orbDomainOf(c.cut.data(), c.levels(), K, xyz(s.posMass[i])), orb.domain()[i])
          << "particle " << i;
    }
    // Fresh points over a box twice the root's: inside the root each lies in its domain's box;
    // beyond it, in a domain whose box it would be in with the root stretched to reach it.
    std::uniform_real_distribution<float> u(-1.0f, 2.0f);
    const Vec3 size = root.hi - root.lo;
    for (int k = 0; k < 20000; ++k) {
      const Vec3 x = root.lo + Vec3{u(rng) * size.x, u(rng) * size.y, u(rng) * size.z};
      const int d = orbDomainOf(c.cut.data(), c.levels(), K, x);
      ASSERT_TRUE(d >= 0 && d < K);
      Box stretched = r.domains[static_cast<std::size_t>(d)];
      for (int a = 0; a < 3; ++a) {
        if (component(stretched.lo, a) == component(root.lo, a))
          component(stretched.lo, a) = -1e30f;
        if (component(stretched.hi, a) == component(root.hi, a)) component(stretched.hi, a) = 1e30f;
      }
      ASSERT_TRUE(inside(Vec4{x.x, x.y, x.z, 0.0f}, stretched)) << "point " << k << " domain " << d;
    }
  }
}

// A cut the ORB snaps to a plane of the trees' key frame sides the particles as their keys do:
// one a rounding below the plane whose key lies above it goes high, with the particles its tree
// puts beside it (else its own tree would hold it beyond the plane, alone with the few like it).
TEST(Orb, CutsOnTheFramesPlanesSideByTheKeys) {
  // The frame of a real run (2 ranks, 1 M Plummer): its middle plane in x lies at c.
  const float c = 0.00162922f, side = 120.8f;
  const KeyFrame frame{{c - 0.5f * side, -0.5f * side, -0.5f * side}, side};
  const float scale = static_cast<float>(1u << kKeyBitsPerAxis) / side;
  const std::uint32_t middle = 1u << (kKeyBitsPerAxis - 1);
  std::vector<Vec4> p;
  std::mt19937_64 rng(3);
  // Spread over most of the frame: the candidate planes are float sums a + j·h of a far from
  // the plane, each a few ulps of |a| off it, which a cut's position keeps.
  std::uniform_real_distribution<float> u(-55.0f, 55.0f);
  for (int k = 0; k < 20000; ++k) p.push_back({c + u(rng), u(rng), u(rng), 1.0f});
  // And a row within 2e-6 of the plane (a few ulps of the frame's coordinates there).
  for (int k = -200; k <= 200; ++k)
    p.push_back({c + 1e-8f * static_cast<float>(k), 0.0f, 0.0f, 1.0f});
  const std::vector<std::uint64_t> w(p.size(), 1);
  HostOrbParticles orb(p, w);
  OrbSettings snapped;
  snapped.grid = frame;
  const OrbResult r = decompose(2, boundsOf(p), orb, kOneProcess, snapped);
  ASSERT_EQ(r.cuts.cut[0].keyPlane, middle) << "the cut is the frame's middle plane";
  int between = 0;  // particles the cut's position and the keys side apart
  for (const Vec4& q : p) {
    between +=
        (q.x < r.cuts.cut[0].position) != (quantizeAxis(q.x, frame.origin.x, scale) < middle);
  }
  std::printf("cut at %.9g (the plane meant at %.9g): %d particles between\n",
              r.cuts.cut[0].position, c, between);
  ASSERT_GT(between, 0) << "the cut's position sides every particle as the keys do: untested";
  for (std::size_t i = 0; i < p.size(); ++i) {
    const bool high = quantizeAxis(p[i].x, frame.origin.x, scale) >= middle;
    ASSERT_EQ(orb.domain()[i], high ? 1 : 0) << "particle " << i << " at x = " << p[i].x;
  }
}

// The decomposition's frame around its first cut (OrbSettings::gridOnFirstCut) has that cut for
// its middle plane; when the particles leave it, a new frame around the same cut and the cuts
// sided in it (cutsInFrame) keep the first cut on the new frame's middle plane, sided by the
// new keys, and the later cuts (no planes of the new frame) by their positions.
TEST(Orb, ANewFrameKeepsTheFirstCutOnItsMiddlePlane) {
  const Particles s = makePlummer(20000, 9);
  const std::vector<std::uint64_t> w = randomWeights(s.size(), 15);
  const Box root = boundsOf(s.posMass);
  HostOrbParticles orb(s.posMass, w);
  OrbSettings onCut;
  onCut.gridOnFirstCut = true;
  const OrbResult r = decompose(4, root, orb, kOneProcess, onCut);
  ASSERT_EQ(r.cuts.levels(), 2);
  const std::uint32_t middle = 1u << (kKeyBitsPerAxis - 1);
  const OrbCut& first = r.cuts.cut[0];
  EXPECT_EQ(first.keyPlane, middle);
  EXPECT_EQ(first.keyScale, keyScale(r.frame));

  Box wider = root;
  wider.hi = wider.hi + Vec3{3.0f, 3.0f, 3.0f};
  const KeyFrame f = frameAroundCut(wider, first, 0.05f);
  const OrbCuts moved = cutsInFrame(r.cuts, f, true);
  EXPECT_EQ(moved.cut[0].keyPlane, middle);
  EXPECT_EQ(moved.cut[0].keyScale, keyScale(f));
  for (int k = 1; k < 8; ++k) EXPECT_EQ(moved.cut[k].keyScale, 0.0f) << "cut " << k;
  // Points within a few ulps of the new frame's coordinates around the plane: their first
  // level's side is their key's side in the new frame.
  const int a = first.axis;
  for (int k = -300; k <= 300; ++k) {
    Vec3 x{0.0f, 0.0f, 0.0f};
    const float v = first.position + 1e-7f * static_cast<float>(k);
    (a == 0 ? x.x : a == 1 ? x.y : x.z) = v;
    const float origin = a == 0 ? f.origin.x : a == 1 ? f.origin.y : f.origin.z;
    const bool high = quantizeAxis(v, origin, keyScale(f)) >= middle;
    ASSERT_EQ(orbHigh(moved.cut[0], x), high) << "at " << v;
  }
}

// The domains that meet an octree cube (orbDomainsMeetingCube: a cube whose parts several
// ranks' trees hold), by hand: a frame [0, 8)³, three domains: x < 4 (rank 0), and x ≥ 4 cut at
// y = 2 into rank 1 (below) and rank 2, the cuts sided by the frame's keys.
TEST(OrbCubes, DomainsMeetingACubeByHand) {
  const KeyFrame f{{0.0f, 0.0f, 0.0f}, 8.0f};
  const std::uint32_t unit = 1u << (kKeyBitsPerAxis - 3);  // keys per unit length
  OrbCuts c;
  c.ranks = 3;
  c.cut.assign(6, OrbCut{});
  c.cut[0] = {0, 4.0f, 1};
  c.cut[3 + 1] = {1, 2.0f, 2};
  sideByKeys(c.cut[0], f, 4 * unit);
  sideByKeys(c.cut[3 + 1], f, 2 * unit);
  const auto point = [&](float x, float y, float z) {
    return KeyCoords{quantizeAxis(x, 0.0f, keyScale(f)), quantizeAxis(y, 0.0f, keyScale(f)),
                     quantizeAxis(z, 0.0f, keyScale(f))};
  };
  const OrbCutsView v = viewOf(c);
  EXPECT_EQ(orbDomainsMeetingCube(v, f, point(1, 1, 1), 0), 3) << "the root";
  EXPECT_EQ(orbDomainsMeetingCube(v, f, point(1, 7, 7), 1), 1) << "x < 4: rank 0's";
  EXPECT_EQ(orbDomainsMeetingCube(v, f, point(5, 1, 1), 1), 2) << "x ≥ 4, y < 4: ranks 1, 2";
  EXPECT_EQ(orbDomainsMeetingCube(v, f, point(5, 5, 1), 1), 1) << "x ≥ 4, y ≥ 4: rank 2's";
  EXPECT_EQ(orbDomainsMeetingCube(v, f, point(5, 1, 1), 2), 1) << "[4, 6) × [0, 2): rank 1's";
  EXPECT_EQ(orbDomainsMeetingCube(v, f, point(5, 3, 1), 2), 1) << "[4, 6) × [2, 4): rank 2's";
  EXPECT_EQ(orbDomainsMeetingCube(v, f, point(3, 3, 1), 2), 1) << "[2, 4)²: rank 0's";
}

// A cut sided by its position (not by the frame's keys: the cuts of an earlier frame) is
// compared by its position's key. Through a cube's inside it counts both sides; on a face it
// counts the cube above the face on both sides too (a particle a rounding below the position
// may share its key), never the cube below it.
TEST(OrbCubes, DomainsMeetingACubeByAPosition) {
  const KeyFrame f{{0.0f, 0.0f, 0.0f}, 8.0f};
  const auto point = [&](float x) { return KeyCoords{quantizeAxis(x, 0.0f, keyScale(f)), 0u, 0u}; };
  OrbCuts inside{2, {OrbCut{0, 3.3f, 1}, OrbCut{}}};
  const OrbCutsView a = viewOf(inside);
  EXPECT_EQ(orbDomainsMeetingCube(a, f, point(1), 1), 2) << "[0, 4)";
  EXPECT_EQ(orbDomainsMeetingCube(a, f, point(2.5f), 2), 2) << "[2, 4)";
  EXPECT_EQ(orbDomainsMeetingCube(a, f, point(3.5f), 3), 2) << "[3, 4)";
  EXPECT_EQ(orbDomainsMeetingCube(a, f, point(2.5f), 3), 1) << "[2, 3)";
  EXPECT_EQ(orbDomainsMeetingCube(a, f, point(4.5f), 3), 1) << "[4, 5)";
  EXPECT_EQ(orbDomainsMeetingCube(a, f, point(5), 1), 1) << "[4, 8)";
  OrbCuts onFace{2, {OrbCut{0, 3.0f, 1}, OrbCut{}}};
  const OrbCutsView b = viewOf(onFace);
  EXPECT_EQ(orbDomainsMeetingCube(b, f, point(3.5f), 3), 2) << "[3, 4), above the face";
  EXPECT_EQ(orbDomainsMeetingCube(b, f, point(2.5f), 3), 1) << "[2, 3), below it";
}

// On random decompositions (K = 2..8, cuts on the frame's planes of levels up to 6), the
// domains meeting a cube of level L ≤ 3 are the distinct domains of the points of its level-6
// sub-cubes, which see every plane such cuts can lie on; the same cuts sided by their positions
// count no fewer.
TEST(OrbCubes, DomainsMeetingACubeAreTheDomainsOfItsPoints) {
  std::mt19937_64 rng(2026);
  const KeyFrame f{{-1.0f, -2.0f, -3.0f}, 16.0f};
  const std::uint32_t level6 = 1u << (kKeyBitsPerAxis - 6);
  int whole = 0, shared = 0;  // cubes one domain holds, cubes several share
  for (int trial = 0; trial < 40; ++trial) {
    const int ranks = 2 + trial % 7;
    // Random weights at random points: decompose snaps the cuts to planes of `f` within its
    // tolerance; the points' coarse spread keeps the planes coarse enough.
    std::vector<Vec4> p;
    std::uniform_int_distribution<int> cell(0, 63);
    for (int k = 0; k < 3000; ++k) {
      const float h = f.side / 64.0f;
      p.push_back({f.origin.x + (cell(rng) + 0.5f) * h, f.origin.y + (cell(rng) + 0.5f) * h,
                   f.origin.z + (cell(rng) + 0.5f) * h, 1.0f});
    }
    const std::vector<std::uint64_t> w = randomWeights(p.size(), 100 + trial);
    HostOrbParticles orb(p, w);
    OrbSettings s;
    s.grid = f;
    s.snapTolerance = 0.05;
    const OrbResult r = decompose(ranks, boundsOf(p), orb, kOneProcess, s);
    for (const OrbCut& c : r.cuts.cut) {
      if (c.axis < 0) continue;
      ASSERT_GT(c.keyScale, 0.0f);
      ASSERT_EQ(c.keyPlane % level6, 0u) << "a cut finer than level 6";
    }
    const OrbCutsView v = viewOf(r.cuts);
    OrbCuts positions = r.cuts;
    for (OrbCut& c : positions.cut) c.keyScale = 0.0f;
    const OrbCutsView byPosition = viewOf(positions);
    std::uniform_int_distribution<std::uint32_t> key(0, (1u << kKeyBitsPerAxis) - 1);
    for (int q = 0; q < 50; ++q) {
      const KeyCoords at{key(rng), key(rng), key(rng)};
      const int level = q % 4;
      const int shift = kKeyBitsPerAxis - level;
      const std::uint32_t sub = 1u << (6 - level);  // level-6 sub-cubes per axis
      std::vector<bool> seen(static_cast<std::size_t>(ranks), false);
      for (std::uint32_t i = 0; i < sub * sub * sub; ++i) {
        const std::uint32_t ix = i % sub, iy = i / sub % sub, iz = i / (sub * sub);
        const KeyCoords k{(at.x >> shift << shift) + ix * level6 + level6 / 2,
                          (at.y >> shift << shift) + iy * level6 + level6 / 2,
                          (at.z >> shift << shift) + iz * level6 + level6 / 2};
        const float scale = f.side / static_cast<float>(1u << kKeyBitsPerAxis);
        const Vec3 x = f.origin + scale * Vec3{static_cast<float>(k.x), static_cast<float>(k.y),
                                               static_cast<float>(k.z)};
        seen[static_cast<std::size_t>(orbDomainOf(r.cuts.cut.data(), r.cuts.levels(), ranks, x))] =
            true;
      }
      const int distinct = static_cast<int>(std::count(seen.begin(), seen.end(), true));
      ASSERT_EQ(orbDomainsMeetingCube(v, f, at, level), distinct)
          << "K = " << ranks << ", trial " << trial << ", level " << level;
      // The same cuts by their positions: never fewer.
      ASSERT_GE(orbDomainsMeetingCube(byPosition, f, at, level), distinct)
          << "K = " << ranks << ", trial " << trial << ", level " << level;
      ++(distinct > 1 ? shared : whole);
    }
  }
  std::printf("%d cubes held whole, %d shared\n", whole, shared);
  EXPECT_GT(whole, 100);
  EXPECT_GT(shared, 100);
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

// When to decompose again (RankShare's ledger): past the threshold, once the time the imbalance
// and growth cost since the last decomposition reaches what it cost.
TEST(Rebalance, ADecompositionOnceTheLossHasPaidForIt) {
  RebalanceLedger ledger;
  // 100 ms steps at 2 % imbalance lose ~1.96 ms each: a 10 ms decomposition pays after six.
  int steps = 0;
  while (!ledger.due(100.0, 1.02, 1.0, 1.01, 10.0)) ++steps;
  EXPECT_EQ(steps, 5);
  EXPECT_NEAR(ledger.lostMs, 6 * 100.0 * (1.0 - 1.0 / 1.02), 1e-9);
  // Below the threshold nothing is due, however much is lost.
  ledger.clear();
  for (int s = 0; s < 1000; ++s) EXPECT_FALSE(ledger.due(100.0, 1.005, 1.0, 1.01, 10.0));
  EXPECT_GT(ledger.lostMs, 10.0);
  // Growth counts as imbalance does (4.76 ms a step at 5 %), and both together compound.
  ledger.clear();
  EXPECT_FALSE(ledger.due(100.0, 1.0, 1.05, 1.02, 10.0));
  EXPECT_FALSE(ledger.due(100.0, 1.0, 1.05, 1.02, 10.0));
  EXPECT_TRUE(ledger.due(100.0, 1.0, 1.05, 1.02, 10.0));
  ledger.clear();
  EXPECT_FALSE(ledger.due(100.0, 1.02, 1.05, 1.02, 10.0));  // 6.63 ms a step
  EXPECT_TRUE(ledger.due(100.0, 1.02, 1.05, 1.02, 10.0));
  // A decomposition that costs nothing is due as soon as the threshold is passed.
  ledger.clear();
  EXPECT_TRUE(ledger.due(100.0, 1.03, 1.0, 1.02, 0.0));
}
