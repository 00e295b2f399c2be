// A CUDA backend's particle exchange in device memory (device_exchange.h).
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/device_exchange.h"

namespace bhviz::sim::cuda {

const PackedParticle* GpuExchange::sentHost() {
  const std::size_t bytes = m_leaving.size() * sizeof(PackedParticle);
  std::byte* host = m_sentHost.resize(bytes);
  if (bytes > 0) {
    BHVIZ_CUDA_CHECK(cudaMemcpyAsync(host, m_sent.data(), bytes, cudaMemcpyDeviceToHost, m_stream));
  }
  synchronize(m_stream);
  return reinterpret_cast<const PackedParticle*>(host);
}

PackedParticle* GpuExchange::receiveDevice(std::size_t count) {
  m_receivedCount = count;
  m_receivedOnHost = false;
  m_received.reserve(std::max<std::size_t>(count, 1));
  return m_received.data();
}

PackedParticle* GpuExchange::receiveHost(std::size_t count) {
  m_receivedCount = count;
  m_receivedOnHost = true;
  return reinterpret_cast<PackedParticle*>(m_receivedHost.resize(count * sizeof(PackedParticle)));
}

void GpuExchange::placeArrivals() {
  const std::size_t count = m_receivedCount;
  if (m_receivedOnHost) {
    m_received.reserve(std::max<std::size_t>(count, 1));
    if (count > 0) {
      BHVIZ_CUDA_CHECK(cudaMemcpyAsync(m_received.data(), m_receivedHost.data(),
                                       count * sizeof(PackedParticle), cudaMemcpyHostToDevice,
                                       m_stream));
    }
  }
  m_ends.place(m_leaving, m_received.data(), count);
}

void* GpuExchange::stream() const { return m_stream != nullptr ? m_stream : cudaStreamPerThread; }

}  // namespace bhviz::sim::cuda
