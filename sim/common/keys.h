#pragma once
// Space-filling-curve keys: 21 bits per axis, 63 bits per key, most significant octant first.
// Morton interleaves the coordinate bits; Peano–Hilbert (Skilling 2004, "Programming the
// Hilbert curve") first transforms them so that consecutive keys are face-neighbouring cells.
// Both curves visit every octree cell as one contiguous run of keys, which is what the tree
// build relies on: the 3 bits at level L name the child octant (in curve order). The builds'
// keys come from the curve's table of states (hilbert_table.h), the same keys as hilbertEncode
// here, which defines them.

#include <cstdint>

#include "sim/common/hd.h"
#include "sim/common/vec.h"

namespace bhviz::sim {

enum class Curve : std::uint8_t { Hilbert, Morton };

inline constexpr int kKeyBitsPerAxis = 21;
inline constexpr int kMaxLevel = kKeyBitsPerAxis;  ///< deepest octree level (root is 0)
inline constexpr std::uint32_t kKeyAxisMax = (1u << kKeyBitsPerAxis) - 1u;

/// Integer cell coordinates on the 2^21 grid.
struct KeyCoords {
  std::uint32_t x = 0, y = 0, z = 0;
};

/// Spreads the low 21 bits of v so that bit i lands at bit 3i.
BHVIZ_HD inline std::uint64_t spreadBits3(std::uint32_t v) {
  std::uint64_t x = v & kKeyAxisMax;
  x = (x | x << 32) & 0x001f00000000ffffull;
  x = (x | x << 16) & 0x001f0000ff0000ffull;
  x = (x | x << 8) & 0x100f00f00f00f00full;
  x = (x | x << 4) & 0x10c30c30c30c30c3ull;
  x = (x | x << 2) & 0x1249249249249249ull;
  return x;
}

/// Inverse of spreadBits3: gathers bits 0, 3, 6, … into the low 21 bits.
BHVIZ_HD inline std::uint32_t compactBits3(std::uint64_t x) {
  x &= 0x1249249249249249ull;
  x = (x ^ (x >> 2)) & 0x10c30c30c30c30c3ull;
  x = (x ^ (x >> 4)) & 0x100f00f00f00f00full;
  x = (x ^ (x >> 8)) & 0x001f0000ff0000ffull;
  x = (x ^ (x >> 16)) & 0x001f00000000ffffull;
  x = (x ^ (x >> 32)) & 0x00000000001fffffull;
  return static_cast<std::uint32_t>(x);
}

BHVIZ_HD inline std::uint64_t mortonEncode(KeyCoords c) {
  return (spreadBits3(c.x) << 2) | (spreadBits3(c.y) << 1) | spreadBits3(c.z);
}

BHVIZ_HD inline KeyCoords mortonDecode(std::uint64_t key) {
  return {compactBits3(key >> 2), compactBits3(key >> 1), compactBits3(key)};
}

/// Skilling's AxestoTranspose for three axes: after it, interleaving the axes Morton-style
/// gives the Hilbert index.
BHVIZ_HD inline std::uint64_t hilbertEncode(KeyCoords c) {
  std::uint32_t X[3] = {c.x, c.y, c.z};
  // Inverse undo: walk from the top bit down, reflecting or swapping the lower bits.
  for (std::uint32_t q = 1u << (kKeyBitsPerAxis - 1); q > 1; q >>= 1) {
    const std::uint32_t p = q - 1;
    for (int i = 0; i < 3; ++i) {
      if (X[i] & q) {
        X[0] ^= p;
      } else {
        const std::uint32_t t = (X[0] ^ X[i]) & p;
        X[0] ^= t;
        X[i] ^= t;
      }
    }
  }
  // Gray encode.
  X[1] ^= X[0];
  X[2] ^= X[1];
  std::uint32_t t = 0;
  for (std::uint32_t q = 1u << (kKeyBitsPerAxis - 1); q > 1; q >>= 1) {
    if (X[2] & q) t ^= q - 1;
  }
  X[0] ^= t;
  X[1] ^= t;
  X[2] ^= t;
  return mortonEncode({X[0], X[1], X[2]});
}

/// Skilling's TransposetoAxes: the exact inverse of hilbertEncode.
BHVIZ_HD inline KeyCoords hilbertDecode(std::uint64_t key) {
  const KeyCoords tr = mortonDecode(key);
  std::uint32_t X[3] = {tr.x, tr.y, tr.z};
  // Gray decode.
  const std::uint32_t t = X[2] >> 1;
  X[2] ^= X[1];
  X[1] ^= X[0];
  X[0] ^= t;
  // Undo the excess work, from the low bits up.
  for (std::uint32_t q = 2; q != (1u << kKeyBitsPerAxis); q <<= 1) {
    const std::uint32_t p = q - 1;
    for (int i = 2; i >= 0; --i) {
      if (X[i] & q) {
        X[0] ^= p;
      } else {
        const std::uint32_t s = (X[0] ^ X[i]) & p;
        X[0] ^= s;
        X[i] ^= s;
      }
    }
  }
  return {X[0], X[1], X[2]};
}

BHVIZ_HD inline std::uint64_t encodeKey(Curve curve, KeyCoords c) {
  return curve == Curve::Hilbert ? hilbertEncode(c) : mortonEncode(c);
}

BHVIZ_HD inline KeyCoords decodeKey(Curve curve, std::uint64_t key) {
  return curve == Curve::Hilbert ? hilbertDecode(key) : mortonDecode(key);
}

/// The cube the keys quantise: origin (lowest corner) and side length [length].
struct KeyFrame {
  Vec3 origin;
  float side = 1.0f;
};

/// A cube a little larger than the bounding box, so that no coordinate hits the top edge.
BHVIZ_HD inline KeyFrame keyFrameFor(const Box& bounds) {
  const Vec3 extent = bounds.hi - bounds.lo;
  float side = fmaxf(fmaxf(extent.x, extent.y), extent.z);
  side = side > 0.0f ? side * 1.0001f : 1.0f;
  const Vec3 centre = 0.5f * (bounds.lo + bounds.hi);
  return {centre - 0.5f * Vec3{side, side, side}, side};
}

BHVIZ_HD inline std::uint32_t quantizeAxis(float v, float origin, float scale) {
  const float q = (v - origin) * scale;
  if (!(q > 0.0f)) return 0;  // also maps NaN to 0; NaN is caught before the build
  if (q >= static_cast<float>(kKeyAxisMax)) return kKeyAxisMax;
  return static_cast<std::uint32_t>(q);
}

/// Quantised coordinates per unit length in frame `f` [1/length]: quantizeAxis's `scale`.
BHVIZ_HD inline float keyScale(const KeyFrame& f) {
  return static_cast<float>(1u << kKeyBitsPerAxis) / f.side;
}

BHVIZ_HD inline KeyCoords quantize(Vec3 p, const KeyFrame& f) {
  const float scale = keyScale(f);
  return {quantizeAxis(p.x, f.origin.x, scale), quantizeAxis(p.y, f.origin.y, scale),
          quantizeAxis(p.z, f.origin.z, scale)};
}

/// The geometric cube of the octree cell at `level` (0 = the whole frame) that holds the
/// quantised point q: what the tree overlay draws, on the host and on the device.
BHVIZ_HD inline Box cellCube(KeyCoords q, int level, const KeyFrame& f) {
  const int shift = kKeyBitsPerAxis - level;
  const float side = f.side / static_cast<float>(1u << level);
  const Vec3 lo =
      f.origin + side * Vec3{static_cast<float>(q.x >> shift), static_cast<float>(q.y >> shift),
                             static_cast<float>(q.z >> shift)};
  return {lo, lo + Vec3{side, side, side}};
}

/// The child octant (0..7, in curve order) of a key at octree level `level` (1..21).
BHVIZ_HD inline unsigned keyDigit(std::uint64_t key, int level) {
  return static_cast<unsigned>(key >> (3 * (kMaxLevel - level))) & 7u;
}

}  // namespace bhviz::sim
