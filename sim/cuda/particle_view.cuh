#pragma once
// A DeviceParticles' arrays as kernels take them (pointers by value), and one particle moved
// between them in one piece: the exchange's gathers and placements (exchange.cu) and the rebuild
// around the targets' gather and scatter (local_rebuild.cu).

#include <cstdint>

#include "sim/cuda/cuda_stages.h"
#include "sim/particles.h"

namespace bhviz::sim::cuda {

/// A DeviceParticles' arrays as kernels read them ...
struct ParticleView {
  const Vec4* posMass;
  const Vec4* vel;
  const Vec4* accPot;
  const std::uint32_t* id;
  const std::uint8_t* tag;
  const std::uint8_t* bin;
};

/// ... and write them.
struct ParticleSpans {
  Vec4* posMass;
  Vec4* vel;
  Vec4* accPot;
  std::uint32_t* id;
  std::uint8_t* tag;
  std::uint8_t* bin;
  __host__ __device__ operator ParticleView() const { return {posMass, vel, accPot, id, tag, bin}; }
};

inline ParticleView viewOf(const DeviceParticles& p) {
  return {p.posMass.data(), p.vel.data(), p.accPot.data(), p.id.data(), p.tag.data(), p.bin.data()};
}

inline ParticleSpans spansOf(DeviceParticles& p) {
  return {p.posMass.data(), p.vel.data(), p.accPot.data(), p.id.data(), p.tag.data(), p.bin.data()};
}

/// Particle i of `p` in one piece (sim/particles.h's pack) ...
inline __device__ PackedParticle packedAt(const ParticleView& p, std::uint32_t i) {
  return {p.posMass[i], p.vel[i], p.accPot[i], p.id[i], p.tag[i], p.bin[i]};
}

/// ... written into slot j of `p` (unpack).
inline __device__ void placeAt(const ParticleSpans& p, std::uint32_t j, const PackedParticle& q) {
  p.posMass[j] = q.posMass;
  p.vel[j] = q.vel;
  p.accPot[j] = q.accPot;
  p.id[j] = q.id;
  p.tag[j] = q.tag;
  p.bin[j] = q.bin;
}

/// Particle i of `from` into slot j of `to`, every array (sim/particles.h's copyParticle).
inline __device__ void copyParticle(const ParticleView& from, std::uint32_t i,
                                    const ParticleSpans& to, std::uint32_t j) {
  placeAt(to, j, packedAt(from, i));
}

}  // namespace bhviz::sim::cuda
