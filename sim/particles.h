#pragma once
// The particle state, as a structure of arrays. Both backends use this layout; the CUDA backend
// keeps the same arrays on the device. G = 1 throughout; units are whatever the initial
// conditions chose (N-body units for the spheres, galaxy units for the disk models).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/common/vec.h"

namespace bhviz::sim {

/// What a particle belongs to, for colouring and hiding. Stored in the low 2 bits of the tag.
enum class Component : std::uint8_t { Sphere = 0, Disk = 1, Bulge = 2, Halo = 3 };

/// A component tag: the component in bits 0-1, the galaxy index (0 or 1 in a merger) in bits 2-7.
inline std::uint8_t makeTag(Component c, unsigned galaxy) {
  return static_cast<std::uint8_t>(static_cast<unsigned>(c) | (galaxy << 2));
}
inline Component tagComponent(std::uint8_t tag) { return static_cast<Component>(tag & 3u); }
inline unsigned tagGalaxy(std::uint8_t tag) { return tag >> 2; }

/// Bytes of one particle across every array of Particles.
inline constexpr std::size_t kParticleBytes = 3 * sizeof(Vec4) + sizeof(std::uint32_t) + 2;

struct Particles {
  std::vector<Vec4> posMass;      ///< x, y, z [length]; w = mass [mass]
  std::vector<Vec4> vel;          ///< vx, vy, vz [length/time]; w unused (0)
  std::vector<Vec4> accPot;       ///< ax, ay, az [length/time²]; w = potential [energy/mass]
  std::vector<std::uint32_t> id;  ///< stable identity, 0..N-1 at creation
  std::vector<std::uint8_t> tag;  ///< component and galaxy (makeTag)
  std::vector<std::uint8_t> bin;  ///< time bin: step = dtMax / 2^bin

  std::size_t size() const { return posMass.size(); }
  void resize(std::size_t n);
  /// Throws std::invalid_argument naming the first inconsistency (array sizes, non-finite
  /// values, non-positive masses, duplicate or out-of-range ids).
  void validate() const;
};

/// Copies particle i of `from` into slot k of `to`, every array (`to` already holds slot k).
inline void copyParticle(const Particles& from, std::size_t i, Particles& to, std::size_t k) {
  to.posMass[k] = from.posMass[i];
  to.vel[k] = from.vel[i];
  to.accPot[k] = from.accPot[i];
  to.id[k] = from.id[i];
  to.tag[k] = from.tag[i];
  to.bin[k] = from.bin[i];
}

/// One particle in one piece, every array's entry: how a particle exchange (sim/dist/) moves
/// it between ranks, through MPI or device to device, and what a GPU packs its leavers into.
struct PackedParticle {
  Vec4 posMass, vel, accPot;
  std::uint32_t id = 0;
  std::uint8_t tag = 0, bin = 0;
};

inline PackedParticle pack(const Particles& p, std::size_t i) {
  return {p.posMass[i], p.vel[i], p.accPot[i], p.id[i], p.tag[i], p.bin[i]};
}

inline void unpack(const PackedParticle& q, Particles& p, std::size_t i) {
  p.posMass[i] = q.posMass;
  p.vel[i] = q.vel;
  p.accPot[i] = q.accPot;
  p.id[i] = q.id;
  p.tag[i] = q.tag;
  p.bin[i] = q.bin;
}

/// Every particle of `p` packed, in its order; and back.
std::vector<PackedParticle> packAll(const Particles& p);
Particles unpackAll(const std::vector<PackedParticle>& packed);

/// Where a rank's particles go when those at `leaving` leave and others arrive (a particle
/// exchange, sim/dist/): every particle that stays keeps its slot unless it lies beyond the new
/// end, whence it moves down into a hole; the arrivals fill the holes left, then the end. The
/// work is the movers', not the n particles' (a few hundred strays of 16 M each step).
struct ExchangePlan {
  std::size_t size = 0;                  ///< particles after the exchange
  std::vector<std::uint32_t> from, to;   ///< staying particle from[k] moves to slot to[k]
  std::vector<std::uint32_t> arrivalAt;  ///< the slot of each arrival, in their order
};

/// The plan for n particles of which `leaving` (ascending, distinct, each < n) leave and
/// `arriving` come. Throws std::invalid_argument when `leaving` is not ascending and distinct,
/// std::out_of_range for an index ≥ n. Every from[k] ≥ size > to[k], so the moves may run in any
/// order, in parallel, before the arrivals are written.
ExchangePlan planExchange(std::size_t n, const std::vector<std::uint32_t>& leaving,
                          std::size_t arriving);

/// The particles of `p` whose id is a multiple of `stride` (≥ 1), in p's order: a stable sample
/// (the same particles every time, whatever their order or where they are held).
Particles everyNthId(const Particles& p, std::uint32_t stride);

/// The same particles in id order: index i holds the particle with id i. Throws
/// std::invalid_argument when the ids are not 0..N-1 (what validate() guarantees).
Particles sortedById(const Particles& p);

}  // namespace bhviz::sim
