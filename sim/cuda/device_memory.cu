// Device memory, host copies and event timing for the CUDA stages.
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"

namespace bhviz::sim::cuda {

int deviceCount() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

namespace {

/// deviceAlloc's blocks and their sizes (a cudaMalloc costs far more than the lock).
struct Allocations {
  std::mutex lock;
  std::unordered_map<void*, std::size_t> bytes;
  std::size_t inUse = 0, peak = 0;
};

Allocations& allocations() {
  static Allocations a;
  return a;
}

}  // namespace

std::size_t deviceBytesInUse() noexcept {
  Allocations& a = allocations();
  const std::lock_guard<std::mutex> hold(a.lock);
  return a.inUse;
}

std::size_t deviceBytesPeak() noexcept {
  Allocations& a = allocations();
  const std::lock_guard<std::mutex> hold(a.lock);
  return a.peak;
}

void* deviceAlloc(std::size_t bytes) {
  void* p = nullptr;
  if (bytes == 0) return p;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaSuccess) {
    Allocations& a = allocations();
    const std::lock_guard<std::mutex> hold(a.lock);
    a.bytes[p] = bytes;
    a.inUse += bytes;
    a.peak = std::max(a.peak, a.inUse);
    return p;
  }
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::size_t freeBytes = 0, totalBytes = 0;
    (void)cudaMemGetInfo(&freeBytes, &totalBytes);
    char text[200];
    std::snprintf(text, sizeof text,
                  "out of GPU memory: %.3g GiB asked for with %.3g GiB free of %.3g GiB (bhviz "
                  "holds %.3g GiB)",
                  double(bytes) / 1073741824.0, double(freeBytes) / 1073741824.0,
                  double(totalBytes) / 1073741824.0, double(deviceBytesInUse()) / 1073741824.0);
    throw std::runtime_error(text);
  }
  BHVIZ_CUDA_CHECK(e);
  return p;
}

void deviceFree(void* p) noexcept {
  if (p == nullptr) return;
  (void)cudaFree(p);  // a destructor must not throw; a failing free is reported later
  Allocations& a = allocations();
  const std::lock_guard<std::mutex> hold(a.lock);
  const auto it = a.bytes.find(p);
  if (it == a.bytes.end()) return;
  a.inUse -= it->second;
  a.bytes.erase(it);
}

void copyToDevice(void* d_dst, const void* h_src, std::size_t bytes) {
  if (bytes > 0) BHVIZ_CUDA_CHECK(cudaMemcpy(d_dst, h_src, bytes, cudaMemcpyHostToDevice));
}

void copyToHost(void* h_dst, const void* d_src, std::size_t bytes) {
  if (bytes > 0) BHVIZ_CUDA_CHECK(cudaMemcpy(h_dst, d_src, bytes, cudaMemcpyDeviceToHost));
}

void copyOnDevice(void* d_dst, const void* d_src, std::size_t bytes, Stream stream) {
  if (bytes > 0) {
    BHVIZ_CUDA_CHECK(cudaMemcpyAsync(d_dst, d_src, bytes, cudaMemcpyDeviceToDevice, stream));
  }
}

void fillBytes(void* d_dst, int value, std::size_t bytes) {
  if (bytes > 0) {
    BHVIZ_CUDA_CHECK(cudaMemset(d_dst, value, bytes));
    BHVIZ_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

void synchronize(Stream stream) { BHVIZ_CUDA_CHECK(cudaStreamSynchronize(stream)); }

PinnedBytes::~PinnedBytes() {
  if (m_ptr) (void)cudaFreeHost(m_ptr);
}

std::byte* PinnedBytes::resize(std::size_t n) {
  if (n > m_capacity) {
    const std::size_t cap = std::max(n, m_capacity + m_capacity / 2);
    void* p = nullptr;
    BHVIZ_CUDA_CHECK(cudaMallocHost(&p, cap));
    if (m_ptr) (void)cudaFreeHost(m_ptr);
    m_ptr = static_cast<std::byte*>(p);
    m_capacity = cap;
  }
  m_size = n;
  return m_ptr;
}

const std::byte* readBack(PinnedBytes& pinned, const void* d_src, std::size_t bytes,
                          Stream stream) {
  BHVIZ_CUDA_CHECK(
      cudaMemcpyAsync(pinned.resize(bytes), d_src, bytes, cudaMemcpyDeviceToHost, stream));
  synchronize(stream);
  return pinned.data();
}

// ---------------------------------------------------------------------------------------------

void DeviceParticles::resize(std::size_t count) {
  posMass.reserve(count);
  vel.reserve(count);
  accPot.reserve(count);
  id.reserve(count);
  tag.reserve(count);
  bin.reserve(count);
  n = count;
}

void DeviceParticles::poison() {
  posMass.poison();
  vel.poison();
  accPot.poison();
  id.poison();
  tag.poison();
  bin.poison();
}

void DeviceParticles::swap(DeviceParticles& o) noexcept {
  posMass.swap(o.posMass);
  vel.swap(o.vel);
  accPot.swap(o.accPot);
  id.swap(o.id);
  tag.swap(o.tag);
  bin.swap(o.bin);
  std::swap(n, o.n);
}

void BuildWorkspace::reserve(std::size_t n) {
  box.reserve(1);
  frame.reserve(1);
  for (int k = 0; k < 2; ++k) {
    keys[k].reserve(n);
    order[k].reserve(n);
  }
  scratch.resize(n);
}

void DeviceTree::reserve(std::size_t cellCount) {
  first.reserve(cellCount);
  count.reserve(cellCount);
  child.reserve(cellCount);
  parent.reserve(cellCount);
  arrivals.reserve(cellCount);
  childCount.reserve(cellCount);
  level.reserve(cellCount);
  comMass.reserve(cellCount);
  quad.reserve(cellCount);
  box.reserve(cellCount);
  bmax.reserve(cellCount);
  opening.reserve(cellCount);
  // Every array grows alike; the smallest capacity is what all of them hold.
  capacity =
      std::min({first.capacity(), count.capacity(), child.capacity(), parent.capacity(),
                arrivals.capacity(), childCount.capacity(), level.capacity(), comMass.capacity(),
                quad.capacity(), box.capacity(), bmax.capacity(), opening.capacity()});
}

void DeviceTree::poison() {
  first.poison();
  count.poison();
  child.poison();
  parent.poison();
  arrivals.poison();
  childCount.poison();
  level.poison();
  comMass.poison();
  quad.poison();
  box.poison();
  bmax.poison();
  opening.poison();
}

// ---------------------------------------------------------------------------------------------

void uploadParticles(const Particles& h, DeviceParticles& d) {
  const std::size_t n = h.size();
  d.resize(n);
  copyToDevice(d.posMass.data(), h.posMass.data(), n * sizeof(Vec4));
  copyToDevice(d.vel.data(), h.vel.data(), n * sizeof(Vec4));
  copyToDevice(d.accPot.data(), h.accPot.data(), n * sizeof(Vec4));
  copyToDevice(d.id.data(), h.id.data(), n * sizeof(std::uint32_t));
  copyToDevice(d.tag.data(), h.tag.data(), n);
  copyToDevice(d.bin.data(), h.bin.data(), n);
}

void downloadParticles(const DeviceParticles& d, Particles& h) {
  const std::size_t n = d.n;
  h.resize(n);
  copyToHost(h.posMass.data(), d.posMass.data(), n * sizeof(Vec4));
  copyToHost(h.vel.data(), d.vel.data(), n * sizeof(Vec4));
  copyToHost(h.accPot.data(), d.accPot.data(), n * sizeof(Vec4));
  copyToHost(h.id.data(), d.id.data(), n * sizeof(std::uint32_t));
  copyToHost(h.tag.data(), d.tag.data(), n);
  copyToHost(h.bin.data(), d.bin.data(), n);
}

void copyParticles(const DeviceParticles& src, DeviceParticles& dst, Stream stream) {
  const std::size_t n = src.n;
  dst.resize(n);
  copyOnDevice(dst.posMass.data(), src.posMass.data(), n * sizeof(Vec4), stream);
  copyOnDevice(dst.vel.data(), src.vel.data(), n * sizeof(Vec4), stream);
  copyOnDevice(dst.accPot.data(), src.accPot.data(), n * sizeof(Vec4), stream);
  copyOnDevice(dst.id.data(), src.id.data(), n * sizeof(std::uint32_t), stream);
  copyOnDevice(dst.tag.data(), src.tag.data(), n, stream);
  copyOnDevice(dst.bin.data(), src.bin.data(), n, stream);
}

Box downloadBox(const BuildWorkspace& ws) {
  Box b;
  copyToHost(&b, ws.box.data(), sizeof(Box));
  return b;
}

KeyFrame downloadFrame(const BuildWorkspace& ws) {
  KeyFrame f;
  copyToHost(&f, ws.frame.data(), sizeof(KeyFrame));
  return f;
}

std::vector<std::uint64_t> downloadKeys(const BuildWorkspace& ws, std::size_t n) {
  std::vector<std::uint64_t> keys(n);
  copyToHost(keys.data(), ws.keysData(), n * sizeof(std::uint64_t));
  return keys;
}

std::vector<std::uint32_t> downloadOrder(const BuildWorkspace& ws, std::size_t n) {
  std::vector<std::uint32_t> order(n);
  copyToHost(order.data(), ws.orderData(), n * sizeof(std::uint32_t));
  return order;
}

namespace {
template <typename T>
void download(std::vector<T>& h, const DeviceBuffer<T>& d, std::size_t n) {
  h.resize(n);
  copyToHost(h.data(), d.data(), n * sizeof(T));
}
}  // namespace

void downloadTree(const DeviceTree& d, const BuildWorkspace& ws, Tree& h, bool withMoments) {
  const std::size_t n = d.cells;
  h.frame = downloadFrame(ws);
  h.levelBegin = d.levelBegin;
  download(h.first, d.first, n);
  download(h.count, d.count, n);
  download(h.child, d.child, n);
  download(h.childCount, d.childCount, n);
  download(h.level, d.level, n);
  if (withMoments) {
    download(h.comMass, d.comMass, n);
    download(h.quad, d.quad, n);
    download(h.box, d.box, n);
    download(h.bmax, d.bmax, n);
    download(h.opening, d.opening, n);
  } else {
    h.comMass.assign(n, Vec4{});
    h.quad.assign(n, Quadrupole{});
    h.box.assign(n, Box{});
    h.bmax.assign(n, 0.0f);
    h.opening.assign(n, 0.0f);
  }
}

// ---------------------------------------------------------------------------------------------

EventTimer::EventTimer() {
  cudaEvent_t a = nullptr, b = nullptr;
  BHVIZ_CUDA_CHECK(cudaEventCreate(&a));
  BHVIZ_CUDA_CHECK(cudaEventCreate(&b));
  m_start = a;
  m_stop = b;
}

EventTimer::~EventTimer() {
  (void)cudaEventDestroy(static_cast<cudaEvent_t>(m_start));
  (void)cudaEventDestroy(static_cast<cudaEvent_t>(m_stop));
}

void EventTimer::start(Stream stream) {
  BHVIZ_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(m_start), stream));
}

void EventTimer::stop(Stream stream) {
  BHVIZ_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(m_stop), stream));
}

float EventTimer::elapsedMs() {
  BHVIZ_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(m_stop)));
  float ms = 0.0f;
  BHVIZ_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(m_start),
                                        static_cast<cudaEvent_t>(m_stop)));
  return ms;
}

}  // namespace bhviz::sim::cuda
