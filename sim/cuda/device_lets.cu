// A CUDA backend's LETs as device bytes (device_lets.h).
#include <stdexcept>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/device_lets.h"

namespace bhviz::sim::cuda {

GpuLets::~GpuLets() {
  if (m_exchangeDone != nullptr) (void)cudaEventDestroy(m_exchangeDone);
  if (m_cutsDone != nullptr) (void)cudaEventDestroy(m_cutsDone);
  if (m_exchange != nullptr) (void)cudaStreamDestroy(m_exchange);
}

const std::byte* GpuLets::sentHost() {
  std::byte* host = m_sentHost.resize(m_sent.size());
  if (m_sent.size() > 0) {
    BHVIZ_CUDA_CHECK(
        cudaMemcpyAsync(host, m_sent.data(), m_sent.size(), cudaMemcpyDeviceToHost, m_stream));
  }
  synchronize(m_stream);
  return host;
}

void GpuLets::uploadReceived() {
  const std::size_t bytes = m_receivedHost.size();
  m_received.resize(bytes);
  if (bytes == 0) return;
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(m_received.data(), m_receivedHost.data(), bytes,
                                   cudaMemcpyHostToDevice, m_stream));
}

LetSize GpuLets::walkReceived(std::size_t offset, std::size_t bytes) {
  if (offset > m_received.size() || bytes > m_received.size() - offset) {
    throw std::invalid_argument("a LET past the end of the received bytes");
  }
  const LetView v = importLetBytes(m_received.data() + offset, bytes, m_records, m_fault, m_stream);
  if (v.size.cells > 0) m_ends.walkLet(v);
  return v.size;
}

void* GpuLets::stream() const { return m_stream != nullptr ? m_stream : cudaStreamPerThread; }

void* GpuLets::exchangeStream() {
  if (m_exchange == nullptr) {
    BHVIZ_CUDA_CHECK(cudaStreamCreateWithFlags(&m_exchange, cudaStreamNonBlocking));
    BHVIZ_CUDA_CHECK(cudaEventCreateWithFlags(&m_cutsDone, cudaEventDisableTiming));
    BHVIZ_CUDA_CHECK(cudaEventCreateWithFlags(&m_exchangeDone, cudaEventDisableTiming));
  }
  return m_exchange;
}

void GpuLets::exchangeAfterCuts() {
  const auto exchange = static_cast<cudaStream_t>(exchangeStream());
  BHVIZ_CUDA_CHECK(cudaEventRecord(m_cutsDone, static_cast<cudaStream_t>(stream())));
  BHVIZ_CUDA_CHECK(cudaStreamWaitEvent(exchange, m_cutsDone, 0));
}

void GpuLets::walkAfterExchange() {
  const auto exchange = static_cast<cudaStream_t>(exchangeStream());
  BHVIZ_CUDA_CHECK(cudaEventRecord(m_exchangeDone, exchange));
  BHVIZ_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream()), m_exchangeDone, 0));
}

std::string GpuLets::deviceId() const {
  char bus[32] = {};
  int device = 0;
  BHVIZ_CUDA_CHECK(cudaGetDevice(&device));
  BHVIZ_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  return bus;
}

}  // namespace bhviz::sim::cuda
