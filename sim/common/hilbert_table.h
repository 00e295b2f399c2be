#pragma once
// Peano–Hilbert keys by a table of the curve's states: the same keys as hilbertEncode (keys.h),
// Skilling's transform, which stays the definition the table is tested against (test_keys.cpp).
// Every key the builds make comes from the table (encodeKeyByTable): the CUDA keys kernel
// (arithmetic-bound before: 29 µs a 1 M build on an H200, now 15) and the rebuilds around the
// targets on both backends; the CPU's keys too (Skilling's branches take ~100 ns a key in key
// order and ~300 ns on random coordinates there, the table ~25).
//
// Why a table exists. Going down from the top bit, Skilling's transform does, at each level,
// one of two things to the bits *below* that level for each axis i: flip axis 0's, or swap axis
// 0's with axis i's; which one depends only on the level's bits as transformed so far. So the
// lower bits always see the original coordinates through a signed permutation of the axes (which
// original axis each transformed one reads, and whether it is flipped). The Gray code is per
// level too, and so is its running parity (the `t` of hilbertEncode: the XOR of the Gray-coded
// axis 2 at the levels above). A state is therefore (permutation, flips, parity); 48 are reachable
// from the identity (they behave as 24: a minimised table would be half the size), and a level's
// 3-bit digit is a function of the state and the level's octant alone. makeHilbertTable() finds
// them at compile time by following hilbertStep from the identity.
//
// Two levels a lookup: 21 levels are the top one alone, then ten pairs. An entry holds the pair's
// two digits (6 bits) and the state after them (above them).

#include <cstdint>

#include "sim/common/hd.h"
#include "sim/common/keys.h"

namespace bhviz::sim {

inline constexpr int kHilbertStates = 48;

/// The table the keys read. Aligned for 16-byte copies (the CUDA kernel's into shared memory);
/// no member initialisers, so that it can be a __shared__ variable.
struct alignas(16) HilbertTable {
  /// The top level from the identity (state 0): digit | next state << 3.
  std::uint16_t top[8];
  /// State s, two levels' bits (x1 x0 y1 y0 z1 z0, 1: the upper level): the upper level's digit
  /// << 3 | the lower's, | next state << 6.
  std::uint16_t pair[kHilbertStates][64];
};

namespace hilbert_detail {

/// How the bits below the current level see the original axes: transformed axis j reads
/// original axis perm[j], flipped where bit j of `flips` is set; `parity`: the Gray code's
/// running parity.
struct State {
  std::uint8_t perm[3] = {0, 1, 2};
  std::uint8_t flips = 0;
  std::uint8_t parity = 0;
};

constexpr bool same(const State& a, const State& b) {
  return a.perm[0] == b.perm[0] && a.perm[1] == b.perm[1] && a.perm[2] == b.perm[2] &&
         a.flips == b.flips && a.parity == b.parity;
}

/// One level of hilbertEncode seen through state `s`: `octant` holds the level's original bits
/// (x y z, x the high bit); returns the digit the level emits and leaves in `s` the state the
/// levels below see.
constexpr unsigned step(State& s, unsigned octant) {
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
  // Gray code, then the running parity of the Gray-coded axis 2 (the level's own bit counts
  // only below it).
  const unsigned g0 = a[0], g1 = a[1] ^ g0, g2 = a[2] ^ g1;
  const unsigned digit = ((g0 ^ s.parity) << 2) | ((g1 ^ s.parity) << 1) | (g2 ^ s.parity);
  s.parity = static_cast<std::uint8_t>(s.parity ^ g2);
  return digit;
}

}  // namespace hilbert_detail

/// The table, found by following the states from the identity. A state beyond kHilbertStates,
/// or fewer of them, is not a constant expression: the build stops.
constexpr HilbertTable makeHilbertTable() {
  using hilbert_detail::State;
  State states[kHilbertStates] = {};
  int found = 1;  // states[0]: the identity
  const auto indexOf = [&](const State& s) {
    for (int k = 0; k < found; ++k) {
      if (hilbert_detail::same(states[k], s)) return k;
    }
    states[found] = s;  // past kHilbertStates: out of bounds, not a constant expression
    return found++;
  };
  HilbertTable t{};
  for (unsigned o = 0; o < 8; ++o) {
    State s = states[0];
    const unsigned d = hilbert_detail::step(s, o);
    t.top[o] = static_cast<std::uint16_t>(d | unsigned(indexOf(s)) << 3);
  }
  for (int k = 0; k < found; ++k) {  // `found` grows as new states turn up
    for (unsigned bits = 0; bits < 64; ++bits) {
      const unsigned upper = ((bits >> 3) & 4u) | ((bits >> 2) & 2u) | ((bits >> 1) & 1u);
      const unsigned lower = ((bits >> 2) & 4u) | ((bits >> 1) & 2u) | (bits & 1u);
      State s = states[k];
      const unsigned du = hilbert_detail::step(s, upper);
      const unsigned dl = hilbert_detail::step(s, lower);
      t.pair[k][bits] = static_cast<std::uint16_t>((du << 3 | dl) | unsigned(indexOf(s)) << 6);
    }
  }
  if (found != kHilbertStates) throw "makeHilbertTable: kHilbertStates is not the states' count";
  return t;
}

inline constexpr HilbertTable kHilbertTable = makeHilbertTable();

/// The two bits of v at levels `level + 1` and `level`.
BHVIZ_HD inline unsigned twoBits(std::uint32_t v, int level) { return (v >> level) & 3u; }

/// hilbertEncode(c) by table `t` (wherever it lives: the CUDA kernel reads a copy in shared
/// memory).
BHVIZ_HD inline std::uint64_t hilbertEncodeByTable(KeyCoords c, const HilbertTable& t) {
  const int high = kKeyBitsPerAxis - 1;  // 20: the top level, alone
  const unsigned first =
      t.top[((c.x >> high) & 1u) << 2 | ((c.y >> high) & 1u) << 1 | ((c.z >> high) & 1u)];
  std::uint64_t key = first & 7u;
  unsigned state = first >> 3;
  for (int level = high - 2; level >= 0; level -= 2) {
    const unsigned e =
        t.pair[state][twoBits(c.x, level) << 4 | twoBits(c.y, level) << 2 | twoBits(c.z, level)];
    key = key << 6 | (e & 63u);
    state = e >> 6;
  }
  return key;
}

/// encodeKey by table `t`: kHilbertTable on the host, cuda::kDeviceHilbertTable or a copy of it
/// on the device (sim/cuda/hilbert_table.cuh).
BHVIZ_HD inline std::uint64_t encodeKeyByTable(Curve curve, KeyCoords c, const HilbertTable& t) {
  return curve == Curve::Hilbert ? hilbertEncodeByTable(c, t) : mortonEncode(c);
}

}  // namespace bhviz::sim
