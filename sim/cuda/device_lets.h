#pragma once
// A CUDA backend's local essential trees as bytes in its device memory (sim::DeviceLets): the
// send and receive buffers and their pinned host twins, the exchange stream ordered with the
// backend's by two events, and the receiving side's check and walk records (let.h). The two
// things that need the backend's tree, the cut and the walk, stay with it (LetEnds). Plain C++:
// compiles under g++ and nvcc.

#include <string>

#include "sim/backend.h"
#include "sim/cuda/let.h"

struct CUevent_st;  // CUDA's event type; cudaEvent_t is CUevent_st*

namespace bhviz::sim::cuda {

/// What the LETs need of the backend whose tree they are cut from and walked by.
class LetEnds {
 public:
  virtual ~LetEnds() = default;
  /// Cuts the built tree's LET for `region` onto the end of `out`, queued on the backend's
  /// stream; zero sizes: nothing to send.
  virtual LetSize cutInto(const TargetRegion& region, DeviceBytes& out) = 0;
  /// Walks the built groups over a received LET, adding to the targets' forces.
  virtual void walkLet(const LetView& let) = 0;
};

class GpuLets final : public DeviceLets {
 public:
  /// `stream`: the backend's (nullptr: the calling thread's default stream).
  GpuLets(LetEnds& ends, Stream stream) : m_ends(ends), m_stream(stream) {}
  ~GpuLets() override;
  GpuLets(const GpuLets&) = delete;
  GpuLets& operator=(const GpuLets&) = delete;

  void clearSent() override { m_sent.clear(); }
  LetSize appendCut(const TargetRegion& region) override { return m_ends.cutInto(region, m_sent); }
  const std::byte* sentDevice() const override { return m_sent.data(); }
  const std::byte* sentHost() override;
  std::byte* receiveDevice(std::size_t bytes) override { return m_received.resize(bytes); }
  std::byte* receiveHost(std::size_t bytes) override { return m_receivedHost.resize(bytes); }
  void uploadReceived() override;
  LetSize walkReceived(std::size_t offset, std::size_t bytes) override;
  void* stream() const override;
  void* exchangeStream() override;
  void exchangeAfterCuts() override;
  void walkAfterExchange() override;
  std::string deviceId() const override;

 private:
  LetEnds& m_ends;
  Stream m_stream;
  DeviceBytes m_sent, m_received;
  PinnedBytes m_sentHost, m_receivedHost;
  DeviceBuffer<WalkCell> m_records;     // a received LET's walk records
  DeviceBuffer<std::uint32_t> m_fault;  // importLetBytes' check
  // The exchange stream and its two orderings with m_stream (made on first use).
  Stream m_exchange = nullptr;
  CUevent_st* m_cutsDone = nullptr;
  CUevent_st* m_exchangeDone = nullptr;
};

}  // namespace bhviz::sim::cuda
