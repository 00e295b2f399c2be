#pragma once
// Peano–Hilbert keys by a table of the curve's states: the same keys as hilbertEncode (keys.h),
// Skilling's transform, which stays the definition the table is tested against (test_keys.cpp).
// The builds key by the table: the CUDA keys kernel (arithmetic-bound before: 29 µs a 1 M build
// on an H200, now 17) and the CPU's (Skilling's branches took ~300 ns a key there, the table
// ~20).
//
// Why a table exists. Going down from the top bit, Skilling's transform does, at each level,
// one of two things to the bits *below* that level for each axis i: flip axis 0's, or swap axis
// 0's with axis i's; which one depends only on the level's bits as transformed so far. So the
// lower bits always see the original coordinates through a signed permutation of the axes (which
// original axis each transformed one reads, and whether it is flipped). The Gray code and its
// running parity (the `t` of hilbertEncode: the XOR of the transformed axis 2's bits above) are
// per-level too. A state is therefore (permutation, flips, parity); 48 are reachable from the
// identity, and a level's 3-bit digit is a function of the state and the level's octant alone.
// makeHilbertTable() finds them at compile time by following hilbertStep from the identity.
//
// Two levels a lookup: 21 levels are the top one alone, then ten pairs. An entry holds the pair's
// two digits (6 bits) and the state after them (above them).

#include <cstdint>

#include "sim/common/hd.h"
#include "sim/common/keys.h"

namespace bhviz::sim {

inline constexpr int kHilbertStates = 48;

/// How the bits below the current level see the original axes: transformed axis j reads
/// original axis perm[j], flipped where bit j of `flips` is set; `parity`: the Gray code's
/// running parity.
struct HilbertState {
  std::uint8_t perm[3] = {0, 1, 2};
  std::uint8_t flips = 0;
  std::uint8_t parity = 0;
};

constexpr bool operator==(const HilbertState& a, const HilbertState& b) {
  return a.perm[0] == b.perm[0] && a.perm[1] == b.perm[1] && a.perm[2] == b.perm[2] &&
         a.flips == b.flips && a.parity == b.parity;
}

/// One level of hilbertEncode seen through state `s`: `octant` holds the level's original bits
/// (x y z, x the high bit); returns the digit the level emits and leaves in `s` the state the
/// levels below see.
constexpr unsigned hilbertStep(HilbertState& s, unsigned octant) {
  unsigned a[3] = {};
  for (int j = 0; j < 3; ++j) a[j] = ((octant >> (2 - s.perm[j])) & 1u) ^ ((s.flips >> j) & 1u);
  // The first loop of hilbertEncode at this level, for i = 0, 1, 2: flip axis 0's lower bits
  // where the level's bit of axis i is set, else swap axis 0's lower bits with axis i's.
  for (int i = 0; i < 3; ++i) {
    if (a[i] != 0) {
      s.flips ^= 1u;
    } else {
      const std::uint8_t p = s.perm[0];
      s.perm[0] = s.perm[i];
      s.perm[i] = p;
      const unsigned f0 = s.flips & 1u, fi = (s.flips >> i) & 1u;
      s.flips = static_cast<std::uint8_t>((s.flips & ~(1u | (1u << i))) | (fi | (f0 << i)));
    }
  }
  // Gray code, then the running parity of axis 2 above (the level's own bit counts below it).
  const unsigned g0 = a[0], g1 = a[1] ^ g0, g2 = a[2] ^ g1;
  const unsigned digit = ((g0 ^ s.parity) << 2) | ((g1 ^ s.parity) << 1) | (g2 ^ s.parity);
  s.parity = static_cast<std::uint8_t>(s.parity ^ g2);
  return digit;
}

struct HilbertTable {
  /// The top level from the identity (state 0): digit | next state << 3.
  std::uint16_t top[8] = {};
  /// State s, two levels' bits (x1 x0 y1 y0 z1 z0, 1: the upper level): the upper level's digit
  /// << 3 | the lower's, | next state << 6.
  std::uint16_t pair[kHilbertStates][64] = {};
};

constexpr HilbertTable makeHilbertTable() {
  HilbertState states[kHilbertStates] = {};
  int found = 1;  // states[0]: the identity
  const auto indexOf = [&](const HilbertState& s) {
    for (int k = 0; k < found; ++k) {
      if (states[k] == s) return k;
    }
    states[found] = s;  // past kHilbertStates: not a constant expression, the build stops
    return found++;
  };
  HilbertTable t;
  for (unsigned o = 0; o < 8; ++o) {
    HilbertState s = states[0];
    const unsigned d = hilbertStep(s, o);
    t.top[o] = static_cast<std::uint16_t>(d | unsigned(indexOf(s)) << 3);
  }
  for (int k = 0; k < found; ++k) {  // `found` grows as new states turn up
    for (unsigned bits = 0; bits < 64; ++bits) {
      const unsigned upper = ((bits >> 3) & 4u) | ((bits >> 2) & 2u) | ((bits >> 1) & 1u);
      const unsigned lower = ((bits >> 2) & 4u) | ((bits >> 1) & 2u) | (bits & 1u);
      HilbertState s = states[k];
      const unsigned du = hilbertStep(s, upper);
      const unsigned dl = hilbertStep(s, lower);
      t.pair[k][bits] = static_cast<std::uint16_t>((du << 3 | dl) | unsigned(indexOf(s)) << 6);
    }
  }
  return t;
}

inline constexpr HilbertTable kHilbertTable = makeHilbertTable();

/// The two bits of v at levels `level + 1` and `level`.
BHVIZ_HD inline unsigned twoBits(std::uint32_t v, int level) { return (v >> level) & 3u; }

/// hilbertEncode(c) by the table (`top` and `pair` as in HilbertTable, wherever they live: the
/// CUDA kernel reads a copy in shared memory).
BHVIZ_HD inline std::uint64_t hilbertEncodeByTable(KeyCoords c, const std::uint16_t* top,
                                                   const std::uint16_t* pair) {
  const int high = kKeyBitsPerAxis - 1;  // 20: the top level, alone
  const unsigned first =
      top[((c.x >> high) & 1u) << 2 | ((c.y >> high) & 1u) << 1 | ((c.z >> high) & 1u)];
  std::uint64_t key = first & 7u;
  unsigned state = first >> 3;
  for (int level = high - 2; level >= 0; level -= 2) {
    const unsigned e = pair[state * 64u + (twoBits(c.x, level) << 4 | twoBits(c.y, level) << 2 |
                                           twoBits(c.z, level))];
    key = key << 6 | (e & 63u);
    state = e >> 6;
  }
  return key;
}

/// encodeKey by the table, on the host (the CPU backend's keys).
inline std::uint64_t encodeKeyByTable(Curve curve, KeyCoords c) {
  return curve == Curve::Hilbert
             ? hilbertEncodeByTable(c, kHilbertTable.top, &kHilbertTable.pair[0][0])
             : mortonEncode(c);
}

}  // namespace bhviz::sim
