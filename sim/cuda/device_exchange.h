#pragma once
// A CUDA backend's particle exchange in device memory (sim::DeviceExchange): the packed leavers,
// the arrivals' buffer and their pinned host twins for ranks without NCCL. The two things that
// need the backend's particles, packing the leavers and placing the arrivals, stay with it
// (ExchangeEnds), as the LETs' cut and walk do (device_lets.h). Plain C++: compiles under g++
// and nvcc.

#include <vector>

#include "sim/backend.h"
#include "sim/cuda/device_buffer.h"

namespace bhviz::sim::cuda {

/// What the exchange needs of the backend whose particles move.
class ExchangeEnds {
 public:
  virtual ~ExchangeEnds() = default;
  /// packLeavers (domains.h) of the backend's particles into `out`, their indices into `leaving`.
  virtual std::vector<int> packInto(const OrbCuts& cuts, int rank,
                                    DeviceBuffer<PackedParticle>& out,
                                    std::vector<std::uint32_t>& leaving) = 0;
  /// ForceParts::exchange with the `count` arrivals packed at `arriving` (device memory).
  virtual void place(const std::vector<std::uint32_t>& leaving, const PackedParticle* arriving,
                     std::size_t count) = 0;
};

class GpuExchange final : public DeviceExchange {
 public:
  /// `stream`: the backend's (nullptr: the calling thread's default stream).
  GpuExchange(ExchangeEnds& ends, Stream stream) : m_ends(ends), m_stream(stream) {}

  std::vector<int> packLeavers(const OrbCuts& cuts, int rank) override {
    return m_ends.packInto(cuts, rank, m_sent, m_leaving);
  }
  const PackedParticle* sentDevice() const override { return m_sent.data(); }
  const PackedParticle* sentHost() override;
  PackedParticle* receiveDevice(std::size_t count) override;
  PackedParticle* receiveHost(std::size_t count) override;
  void placeArrivals() override;
  void* stream() const override;

 private:
  ExchangeEnds& m_ends;
  Stream m_stream;
  DeviceBuffer<PackedParticle> m_sent, m_received;
  PinnedBytes m_sentHost, m_receivedHost;
  std::vector<std::uint32_t> m_leaving;  ///< the packed particles' indices, ascending
  std::size_t m_receivedCount = 0;
  bool m_receivedOnHost = false;  ///< receiveHost was asked for last
};

}  // namespace bhviz::sim::cuda
