// Keys: both curves are bijections on the 2^21 grid, Hilbert neighbours are face neighbours,
// and every octree cell is one contiguous run of keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "sim/common/hilbert_table.h"
#include "sim/common/keys.h"
#include "sim/rng.h"

using namespace bhviz::sim;

namespace {

KeyCoords randomCoords(Rng& rng) {
  return {static_cast<std::uint32_t>(rng.below(kKeyAxisMax + 1ull)),
          static_cast<std::uint32_t>(rng.below(kKeyAxisMax + 1ull)),
          static_cast<std::uint32_t>(rng.below(kKeyAxisMax + 1ull))};
}

bool sameCoords(KeyCoords a, KeyCoords b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

std::uint64_t manhattan(KeyCoords a, KeyCoords b) {
  auto d = [](std::uint32_t u, std::uint32_t v) { return u > v ? u - v : v - u; };
  return std::uint64_t{d(a.x, b.x)} + d(a.y, b.y) + d(a.z, b.z);
}

class KeysTest : public ::testing::TestWithParam<Curve> {};

}  // namespace

TEST_P(KeysTest, EncodeDecodeRoundTripsOnRandomCoordinates) {
  Rng rng(11);
  for (int k = 0; k < 200000; ++k) {
    const KeyCoords c = randomCoords(rng);
    const std::uint64_t key = encodeKey(GetParam(), c);
    ASSERT_LT(key, std::uint64_t{1} << 63);
    ASSERT_TRUE(sameCoords(decodeKey(GetParam(), key), c)) << "key " << key;
  }
}

TEST_P(KeysTest, DecodeEncodeRoundTripsOnRandomKeys) {
  Rng rng(12);
  for (int k = 0; k < 200000; ++k) {
    const std::uint64_t key = rng.next() >> 1;  // any 63-bit key names exactly one cell
    ASSERT_EQ(encodeKey(GetParam(), decodeKey(GetParam(), key)), key);
  }
}

TEST_P(KeysTest, AllKeysOfASmallGridAreDistinct) {
  // The coarse 2^4 grid scaled to the top bits: 4096 cells must give 4096 different keys.
  std::vector<std::uint64_t> keys;
  for (std::uint32_t x = 0; x < 16; ++x)
    for (std::uint32_t y = 0; y < 16; ++y)
      for (std::uint32_t z = 0; z < 16; ++z)
        keys.push_back(encodeKey(GetParam(), {x << 17, y << 17, z << 17}));
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::unique(keys.begin(), keys.end()), keys.end());
}

TEST_P(KeysTest, EveryOctreeCellIsOneContiguousRunOfKeys) {
  // All points of the cube [X, X+2^s)^3 (aligned) share the key's top 3·(21−s) bits.
  Rng rng(13);
  for (int trial = 0; trial < 2000; ++trial) {
    const int s = 1 + static_cast<int>(rng.below(20));
    const std::uint32_t mask = ~((1u << s) - 1u) & kKeyAxisMax;
    const KeyCoords corner = randomCoords(rng);
    const KeyCoords base{corner.x & mask, corner.y & mask, corner.z & mask};
    const std::uint64_t prefix = encodeKey(GetParam(), base) >> (3 * s);
    for (int k = 0; k < 8; ++k) {
      const KeyCoords inside{base.x + static_cast<std::uint32_t>(rng.below(1u << s)),
                             base.y + static_cast<std::uint32_t>(rng.below(1u << s)),
                             base.z + static_cast<std::uint32_t>(rng.below(1u << s))};
      ASSERT_EQ(encodeKey(GetParam(), inside) >> (3 * s), prefix) << "cell side 2^" << s;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Curves, KeysTest, ::testing::Values(Curve::Hilbert, Curve::Morton),
                         [](const auto& info) {
                           return info.param == Curve::Hilbert ? "Hilbert" : "Morton";
                         });

TEST(HilbertKeys, ConsecutiveKeysAreFaceNeighbours) {
  Rng rng(14);
  for (int k = 0; k < 200000; ++k) {
    const std::uint64_t key = rng.next() >> 2;  // leaves room for key + 1
    ASSERT_EQ(manhattan(hilbertDecode(key), hilbertDecode(key + 1)), 1u) << "key " << key;
  }
}

// The table both backends' keys come from (hilbert_table.h) gives Skilling's keys: on random
// coordinates, on every single bit of every axis (each level's digit and the state it leaves),
// and on the grid's corners and the coordinates either side of each power of two; Morton keys
// pass through encodeKeyByTable unchanged.
TEST(HilbertKeys, TheTableGivesSkillingsKeys) {
  const HilbertTable& t = kHilbertTable;
  const auto same = [&](KeyCoords c) {
    return hilbertEncodeByTable(c, t) == hilbertEncode(c) &&
           encodeKeyByTable(Curve::Hilbert, c, t) == encodeKey(Curve::Hilbert, c) &&
           encodeKeyByTable(Curve::Morton, c, t) == encodeKey(Curve::Morton, c);
  };
  Rng rng(15);
  for (int k = 0; k < 300000; ++k) {
    const KeyCoords c = randomCoords(rng);
    ASSERT_TRUE(same(c)) << c.x << " " << c.y << " " << c.z;
  }
  std::vector<std::uint32_t> edges = {0, kKeyAxisMax};
  for (int b = 0; b < kKeyBitsPerAxis; ++b) {
    edges.push_back(1u << b);
    edges.push_back((1u << b) - 1);
    edges.push_back(kKeyAxisMax ^ (1u << b));
  }
  for (std::uint32_t x : edges)
    for (std::uint32_t y : edges)
      for (std::uint32_t z : edges) ASSERT_TRUE(same({x, y, z})) << x << " " << y << " " << z;
  // The table's rows are exactly the states its entries lead to: every row reached, none beyond.
  std::vector<bool> reached(kHilbertStates, false);
  for (std::uint16_t e : t.top) reached.at(e >> 3) = true;
  for (const auto& row : t.pair)
    for (std::uint16_t e : row) reached.at(e >> 6) = true;
  EXPECT_EQ(std::count(reached.begin(), reached.end(), true), kHilbertStates);
}

TEST(MortonKeys, ConsecutiveKeysAreFarApartSometimesButHilbertNever) {
  // The reason Hilbert is the default: Morton's jumps between consecutive keys are unbounded.
  const std::uint64_t key = (std::uint64_t{1} << 62) - 1;  // the middle of the curve
  EXPECT_GT(manhattan(mortonDecode(key), mortonDecode(key + 1)), 1000000u);
  EXPECT_EQ(manhattan(hilbertDecode(key), hilbertDecode(key + 1)), 1u);
}

TEST(KeyFrame, QuantisesTheBoundingBoxInsideTheGrid) {
  Box b;
  grow(b, Vec3{-3.0f, 1.0f, 2.0f});
  grow(b, Vec3{5.0f, 2.0f, 2.5f});
  const KeyFrame f = keyFrameFor(b);
  const KeyCoords lo = quantize(b.lo, f), hi = quantize(b.hi, f);
  EXPECT_GT(lo.x, 0u);
  EXPECT_LT(hi.x, kKeyAxisMax);
  EXPECT_LE(hi.y, kKeyAxisMax);
  EXPECT_EQ(keyDigit(encodeKey(Curve::Morton, {kKeyAxisMax, 0, 0}), 1), 4u);  // x is the top bit
}
