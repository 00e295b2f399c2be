#pragma once
// The evaluation side of the tree walk (walk.cu): the warp's shared-memory rings of sources,
// each lane's target slots (full rows, and the few targets of a small group replicated over the
// idle slots), and the flush that sums a ring's 32 sources into them with the per-element math
// of gravity.h. Included by walk.cu, whose traversal fills the rings, and by walk_mutual.cu (its
// lane helpers and the reduce-scatter); internal linkage.
#include <cstdint>

#include "sim/common/gravity.h"
#include "sim/common/local_expansion.h"
#include "sim/cuda/walk.h"

namespace bhviz::sim::cuda {

namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWalkWarps = 4;  // warps per block
constexpr int kWalkBlock = 32 * kWalkWarps;
constexpr unsigned kRing = 64;  // entries per shared-memory ring (≥ 2 × 32)
constexpr std::uint32_t kStackCapacity = kWalkStackCapacity;
constexpr unsigned kSharedStack = kWalkSharedStack;
static_assert((kSharedStack & (kSharedStack - 1)) == 0 && kSharedStack >= 256,
              "a power of two that holds one push (≤ 256 cells) above the spill");

constexpr int kMaxTargets = kMaxWalkGroup / 32;  // target slots per lane, at most

/// A multipole in the ring: what m2pQuadrupole reads, in three 16-byte words (48 bytes apart,
/// so eight lanes reading eight different slots hit distinct banks).
struct CellSlot {
  Vec4 comMass;   // centre of mass, mass
  Vec4 quadHead;  // traceless P: xx, yy, zz, xy
  Vec4 quadTail;  // P: xz, yz; softTrace = −tr(Q)·ε²; unused
};

/// One warp's shared memory: the two rings and the leaf scan during the walk, then the copies'
/// partial sums (reduceCopies).
struct WarpRings {
  CellSlot cell[kRing];               // M2P sources
  Vec4 source[kRing];                 // P2P sources: position, mass
  std::uint32_t far[kRing];           // cells to expand about the group's centre (M2L)
  std::uint32_t leafBase[32];         // first particle of the lane's leaf − its exclusive prefix
  std::uint32_t leafEnd[32];          // inclusive prefix of the opened leaves' counts
  std::uint32_t stack[kSharedStack];  // stack position p at p mod (ring size)
};

union WarpShared {
  WarpRings r;
  Vec4 partial[32 * kMaxTargets];
  __device__ WarpShared() {}  // shared memory: nothing is initialised
};

/// The lane's target slots: row i of lane l. The first F = ⌊(n − 1) / 32⌋ rows (n ≤ 32 kTargets,
/// so F < kTargets) are full: slot (l, i) holds target l + 32 i and takes every source of each
/// flush. So a partial row always holds 1 ≤ m ≤ 32 targets: with n = 32 kTargets the last row is
/// a partial one with r = 1, and with n = 32 and two or more rows the group takes two or more
/// copies rather than one full row beside idle ones; the flushes have kTargets variants
/// (flushRows). The m = n − 32 F remaining
/// targets are replicated over the R = kTargets − F remaining rows, r = min(⌊32 R / m⌋, 32)
/// times: partial slot s = l + 32 (i − F) holds target 32 F + s mod m and takes every r-th
/// source of each flush, starting at its copy s / m. Slots with copy ≥ r are idle: they hold
/// target 0 as copy 0 and compute along (a branch around them would cost every lane more), but
/// their sums are never read (reduceCopies reads slots below r m). So a lane costs
/// 32 F + R ⌈32 / r⌉ evaluations per flush of 32 sources instead of 32 kTargets (n = 40 in 64
/// slots: 40, not 64; n = 18: 22); the copies' partial sums are added at the end (reduceCopies).
/// The interaction lists are untouched.
template <int kTargets>
struct Targets {
  Vec3 x[kTargets];
  Vec4 acc[kTargets];
  unsigned copy[kTargets];  // partial rows: first source within a run of `stride`
  unsigned full;            // F, full rows (warp-uniform)
  unsigned rest;            // m, targets in the partial rows (≥ 1)
  unsigned stride;          // r, copies of each partial-row target
};

/// The particle of a group's target k.
__device__ __forceinline__ std::uint32_t particleOf(const std::uint32_t* __restrict__ targets,
                                                    std::uint32_t first, std::uint32_t k) {
  return targets != nullptr ? targets[first + k] : first + k;
}

template <int kTargets>
__device__ __forceinline__ void loadTargets(const Vec4* __restrict__ posMass,
                                            const std::uint32_t* __restrict__ targets,
                                            std::uint32_t first, std::uint32_t n, unsigned lane,
                                            Targets<kTargets>& t) {
  t.full = n > 0 ? min((n - 1) / 32u, unsigned(kTargets - 1)) : 0u;
  t.rest = n - 32u * t.full;
  t.stride = t.rest > 0 ? min(32u * (kTargets - t.full) / t.rest, 32u) : 1u;
#pragma unroll
  for (int i = 0; i < kTargets; ++i) {
    std::uint32_t target = lane + 32u * i;
    if (unsigned(i) >= t.full) {
      const unsigned s = lane + 32u * (i - t.full);
      const unsigned copy = t.rest > 0 ? s / t.rest : t.stride;
      const bool idle = copy >= t.stride;
      t.copy[i] = idle ? 0u : copy;
      target = idle ? 0u : 32u * t.full + s - copy * t.rest;
    } else {
      t.copy[i] = 0;
    }
    t.x[i] = xyz(posMass[particleOf(targets, first, target)]);
    t.acc[i] = {};
  }
}

__device__ inline void addTo(Vec4& a, const Vec4& b) {
  a.x += b.x;
  a.y += b.y;
  a.z += b.z;
  a.w += b.w;
}

/// Sums the copies of each partial-row target into its copy 0, partial slot s < m, which is
/// slot (l, i) of target l + 32 i, through shared memory.
template <int kTargets>
__device__ __forceinline__ void reduceCopies(WarpShared& sh, unsigned lane, Targets<kTargets>& t) {
  if (t.stride == 1) return;
    // The rings are idle: the last flush ended with __syncwarp.
#pragma unroll
  for (int i = 0; i < kTargets; ++i) {
    if (unsigned(i) >= t.full) sh.partial[lane + 32u * (i - t.full)] = t.acc[i];
  }
  __syncwarp();
#pragma unroll
  for (int i = 0; i < kTargets; ++i) {
    const unsigned s = lane + 32u * (i - t.full);
    if (unsigned(i) >= t.full && s < t.rest) {
      for (unsigned c = 1; c < t.stride; ++c) addTo(t.acc[i], sh.partial[s + c * t.rest]);
    }
  }
  __syncwarp();  // read before the next group's rings reuse the memory
}

__device__ inline unsigned lanesBelow(unsigned mask, unsigned lane) {
  return __popc(mask & ((1u << lane) - 1u));
}

__device__ inline std::uint32_t inclusiveWarpSum(std::uint32_t v, unsigned lane) {
  for (unsigned o = 1; o < 32; o <<= 1) {
    const std::uint32_t u = __shfl_up_sync(kFull, v, o);
    if (lane >= o) v += u;
  }
  return v;
}

/// The multipole ring as flush reads it (kPot: also the potential).
template <bool kQuad, bool kPot>
struct CellSources {
  using Slot = CellSlot;
  __device__ static const Slot* ring(const WarpShared& sh) { return sh.r.cell; }
  __device__ static void eval(const Slot& s, Vec3 x, float eps2, Vec4& acc) {
    if (kQuad) {
      const QuadSource q{s.quadHead.x, s.quadHead.y, s.quadHead.z, s.quadHead.w,
                         s.quadTail.x, s.quadTail.y, s.quadTail.z};
      m2pQuadrupole<kPot>(x, s.comMass, q, eps2, acc);
    } else {
      m2pMonopole<kPot>(x, s.comMass, eps2, acc);
    }
  }
};

/// The particle ring as flush reads it (kPot: also the potential).
template <bool kPot>
struct ParticleSources {
  using Slot = Vec4;
  __device__ static const Slot* ring(const WarpShared& sh) { return sh.r.source; }
  __device__ static void eval(const Slot& s, Vec3 x, float eps2, Vec4& acc) {
    p2p<kPot>(x, s, eps2, acc);
  }
};

/// The loops of one flush with kFull full rows, a constant, so that the loops test no row
/// index: full rows take every source (one broadcast read serves them all); partial rows
/// kFull.. take sources copy[i], copy[i] + stride, ... below num, all lanes in step but for one
/// ragged last step.
template <class Sources, int kTargets, int kFull>
__device__ __forceinline__ void flushRows(const typename Sources::Slot* ring, unsigned base,
                                          unsigned num, float eps2, Targets<kTargets>& t) {
  if constexpr (kFull > 0) {
#pragma unroll 4
    for (unsigned k = 0; k < num; ++k) {
      const typename Sources::Slot s = ring[base + k];
#pragma unroll
      for (int i = 0; i < kFull; ++i) Sources::eval(s, t.x[i], eps2, t.acc[i]);
    }
  }
  unsigned at[kTargets];  // ring positions of the partial rows
#pragma unroll
  for (int i = kFull; i < kTargets; ++i) at[i] = base + t.copy[i];
  const unsigned whole = num / t.stride;  // steps in which every copy's source is below num
#pragma unroll 2
  for (unsigned k = 0; k < whole; ++k) {
#pragma unroll
    for (int i = kFull; i < kTargets; ++i) {
      Sources::eval(ring[at[i]], t.x[i], eps2, t.acc[i]);
      at[i] += t.stride;
    }
  }
  if (whole * t.stride < num) {
#pragma unroll
    for (int i = kFull; i < kTargets; ++i) {
      if (at[i] < base + num) Sources::eval(ring[at[i]], t.x[i], eps2, t.acc[i]);
    }
  }
}

/// flushRows for the group's F (t.full < kTargets).
template <class Sources, int kTargets, int kFull = 0>
__device__ __forceinline__ void flushFor(const typename Sources::Slot* ring, unsigned base,
                                         unsigned num, float eps2, Targets<kTargets>& t) {
  if constexpr (kFull + 1 < kTargets) {
    if (t.full != kFull) return flushFor<Sources, kTargets, kFull + 1>(ring, base, num, eps2, t);
  }
  flushRows<Sources, kTargets, kFull>(ring, base, num, eps2, t);
}

/// Evaluates `num` (≤ 32) sources of a ring from position `head`, which is a multiple of 32 (the
/// rings advance by 32 but for the last flush of a group), so the slots read do not wrap.
template <class Sources, int kTargets>
__device__ __forceinline__ void flush(const WarpShared& sh, unsigned head, unsigned num, float eps2,
                                      Targets<kTargets>& t) {
  __syncwarp();  // the appends are visible
  flushFor<Sources>(Sources::ring(sh), head % kRing, num, eps2, t);
  __syncwarp();  // the slots may be refilled
}

/// The sum over the warp of each lane's expansion, term by term, scattered: lane k < kLocalTerms
/// returns term k (the others 0). Recursive halving: at each step a lane keeps the half of its
/// terms its lane bit selects and adds its partner's copy of them, 31 shuffles in all (the
/// terms padded with zeros to 32).
template <int kHalf>
__device__ __forceinline__ void halve(float (&v)[32], unsigned lane) {
  const bool upper = (lane & unsigned(kHalf)) != 0;
#pragma unroll
  for (int k = 0; k < kHalf; ++k) {
    const float send = upper ? v[k] : v[k + kHalf];
    const float keep = upper ? v[k + kHalf] : v[k];
    v[k] = keep + __shfl_xor_sync(kFull, send, kHalf);
  }
  if constexpr (kHalf > 1) halve<kHalf / 2>(v, lane);
}

__device__ __forceinline__ float reduceScatter(const LocalExpansion& l, unsigned lane) {
  static_assert(kLocalTerms <= 32, "a term per lane");
  float v[32];
#pragma unroll
  for (int k = 0; k < 32; ++k) v[k] = k < kLocalTerms ? l.c[k] : 0.0f;
  halve<16>(v, lane);
  return v[0];
}

/// Expands `num` (≤ 32) cells of the far ring from position `head` (a multiple of 32, or the
/// group's last flush) about `centre`, a cell per lane (M2L), and adds the warp's sum to
/// `term` (lane k: term k of the group's expansion).
template <bool kQuad, bool kPot>
__device__ __forceinline__ void flushFar(const WarpShared& sh, const WalkCell* __restrict__ cells,
                                         unsigned head, unsigned num, Vec3 centre, float eps2,
                                         unsigned lane, float& term) {
  __syncwarp();  // the appends are visible
  LocalExpansion l;
  if (lane < num) {
    const WalkCell* w = cells + sh.r.far[(head + lane) % kRing];
    QuadSource q;
    if (kQuad) {
      const Vec4 head4 = w->quadHead, tail = w->quadTail;
      q = {head4.x, head4.y, head4.z, head4.w, tail.x, tail.y, -tail.z * eps2};
    }
    m2l<kPot>(centre, w->comMass, q, eps2, l);
  }
  term += reduceScatter(l, lane);
  __syncwarp();  // the slots may be refilled
}

/// The group's expansion, every term in every lane, from lane k's term k.
__device__ __forceinline__ LocalExpansion gatherExpansion(float term) {
  LocalExpansion l;
#pragma unroll
  for (int k = 0; k < kLocalTerms; ++k) l.c[k] = __shfl_sync(kFull, term, k);
  return l;
}

}  // namespace

}  // namespace bhviz::sim::cuda
