#pragma once
// The CUDA twin of a rank's part of the domains stage (sim/dist/): the ORB's counts on the
// device (the twin of sim::HostOrbParticles; domains.cu), and the particle exchange's device
// steps — select and pack the particles that leave, remove them while the arrivals are placed
// (exchange.cu). Plain C++: compiles under g++ and nvcc; the CUDA runtime stays in the .cu files.

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/cuda/cuda_stages.h"
#include "sim/orb.h"
#include "sim/particles.h"

namespace bhviz::sim::cuda {

/// The ORB's view of n particles in device memory: positions, and weights orbWeight(work, bin)
/// (work may be null: every weight 1). The arrays must outlive the object and not move.
std::unique_ptr<OrbParticles> makeDeviceOrbParticles(const Vec4* posMass, const std::uint32_t* work,
                                                     const std::uint8_t* bin, std::size_t n,
                                                     Stream stream);

/// The sum of n work counts on the device (blocking): whether to decompose again is decided
/// from it, with no copy of every count to the host.
std::uint64_t sumWork(const std::uint32_t* work, std::size_t n, DeviceBuffer<unsigned char>& temp,
                      DeviceBuffer<unsigned long long>& total, Stream stream);

/// Device scratch of sampleById, kept by its caller between calls (grown, never shrunk).
struct SampleScratch {
  DeviceBuffer<std::uint32_t> index;
  DeviceBuffer<int> count;
  DeviceBuffer<std::uint8_t> temp;
  DeviceParticles particles;
};

/// The particles whose id is a multiple of `stride` (Backend::downloadSample) into `out`,
/// selected and gathered on the device so that only they cross to the host (blocking). `out`'s
/// arrays are resized, not made anew: a view of millions of particles each frame reuses them.
void sampleById(const DeviceParticles& p, std::uint32_t stride, SampleScratch& scratch,
                Stream stream, Particles& out);

/// Device scratch of selectLeavers, kept by its caller between calls.
struct LeaverScratch {
  DeviceBuffer<std::uint32_t> index;  ///< the leavers' indices
  DeviceBuffer<int> count, domain;    ///< how many; their domains
  DeviceBuffer<unsigned char> temp;   ///< CUB storage
};

/// The particles whose domain (`domainOf`, n entries) is not `rank`, ascending, and their
/// domains, selected on the device (blocking): only they come to the host.
void selectLeavers(const int* domainOf, std::size_t n, int rank, LeaverScratch& scratch,
                   Stream stream, std::vector<std::uint32_t>& index, std::vector<int>& domain);

/// Device scratch of a rank's particle exchange (findStrays, gatherParticles, removeAndAppend),
/// kept by its caller between calls: a rank calls them before every evaluation, and a fresh
/// allocation's free waits for the whole device.
struct ExchangeScratch {
  DeviceBuffer<OrbCut> cuts;                ///< findStrays, packLeavers: the cuts
  DeviceBuffer<int> domain;                 ///< findStrays, packLeavers: each particle's domain
  LeaverScratch leavers;                    ///< findStrays, packLeavers: the selection
  DeviceBuffer<int> sortedDomain;           ///< packLeavers: the leavers by domain ...
  DeviceBuffer<std::uint32_t> sortedIndex;  ///< ... and their indices
  DeviceBuffer<std::uint32_t> index;        ///< gatherParticles, removeAndPlace: the indices
  DeviceParticles moving;                   ///< gatherParticles: the leavers
  DeviceBuffer<PackedParticle> arriving;    ///< removeAndAppend: the arrivals, uploaded
  DeviceBuffer<std::uint32_t> carry;        ///< removeAndPlace: a carried array while it grows
};

/// Copies of the particles at `indices` (blocking), gathered on the device first.
Particles gatherParticles(const DeviceParticles& p, const std::vector<std::uint32_t>& indices,
                          ExchangeScratch& scratch, Stream stream);

/// ForceParts::strays on the device: the particles outside domain `rank` of `cuts`, ascending,
/// and the domains they lie in (blocking); only they come to the host.
void findStrays(const Vec4* posMass, std::size_t n, const OrbCuts& cuts, int rank,
                ExchangeScratch& scratch, Stream stream, std::vector<std::uint32_t>& index,
                std::vector<int>& domain);

/// Per-particle counts that travel with the particles in an exchange (null: none).
using CarriedArrays = std::array<DeviceBuffer<std::uint32_t>*, 2>;

/// ForceParts::strays and gather on the device at once (DeviceExchange::packLeavers): the
/// particles outside domain `rank` of `cuts` packed into `out`, grouped by the domains they lie
/// in (ascending, each group in the particles' order), and their indices, ascending, into
/// `leaving`. Returns how many lie in each domain (blocking: one download of the counts, one of
/// the indices).
std::vector<int> packLeavers(const DeviceParticles& p, const OrbCuts& cuts, int rank,
                             ExchangeScratch& scratch, DeviceBuffer<PackedParticle>& out,
                             std::vector<std::uint32_t>& leaving, Stream stream);

/// Removes the particles at `leaving` (ascending, distinct indices) and adds the `count`
/// packed particles at `arriving` (device memory) as planExchange places them: only the
/// particles that move are touched (blocking). `ws` lends its scratch particles when the arrays
/// must grow. Each of `carried` (per-particle counts, n entries in the particles' order; null
/// ones skipped) goes along: the staying particles keep their entries, the arrivals get 0.
void removeAndPlace(DeviceParticles& p, const std::vector<std::uint32_t>& leaving,
                    const PackedParticle* arriving, std::size_t count, BuildWorkspace& ws,
                    ExchangeScratch& scratch, Stream stream, CarriedArrays carried = {});

/// removeAndPlace of particles on the host (blocking).
void removeAndAppend(DeviceParticles& p, const std::vector<std::uint32_t>& leaving,
                     const Particles& arriving, BuildWorkspace& ws, ExchangeScratch& scratch,
                     Stream stream, CarriedArrays carried = {});

}  // namespace bhviz::sim::cuda
