#pragma once
// Device memory that plain C++ can hold: a typed buffer that grows geometrically and never
// shrinks, so a simulation step allocates nothing once the sizes settle. The CUDA calls live in
// device_memory.cu; this header needs no <cuda_runtime.h>.

#include <cstddef>
#include <utility>

struct CUstream_st;  // CUDA's stream type; cudaStream_t is CUstream_st*

namespace bhviz::sim::cuda {

/// A cudaStream_t. nullptr is the calling host thread's default stream: CUDA code is compiled
/// with --default-stream per-thread (CMakeLists.txt), so a backend used from the accuracy
/// meter's thread does not queue behind the simulation's.
using Stream = CUstream_st*;

/// Number of CUDA devices; 0 (never an exception) when there is no driver or no device.
int deviceCount() noexcept;

void* deviceAlloc(std::size_t bytes);  ///< cudaMalloc; throws std::runtime_error
void deviceFree(void* p) noexcept;

/// The bytes this process holds through deviceAlloc now, and the most it held at once since
/// the start (every device; a rank of a distributed run has one): what a run needs beyond the
/// CUDA context and libraries' own buffers.
std::size_t deviceBytesInUse() noexcept;
std::size_t deviceBytesPeak() noexcept;
void copyToDevice(void* d_dst, const void* h_src, std::size_t bytes);  ///< blocking
void copyToHost(void* h_dst, const void* d_src, std::size_t bytes);    ///< blocking
void copyOnDevice(void* d_dst, const void* d_src, std::size_t bytes, Stream stream);
void fillBytes(void* d_dst, int value, std::size_t bytes);  ///< blocking memset
void synchronize(Stream stream);

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { deviceFree(m_ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    swap(o);
    return *this;
  }

  /// Makes room for n elements. Growth is by at least 1.5× (1.125× past 256 MiB, where a few
  /// particles more than a rank's share must not cost half its memory again) and discards the
  /// old contents.
  void reserve(std::size_t n) {
    if (n <= m_capacity) return;
    const bool large = m_capacity * sizeof(T) > (std::size_t{256} << 20);
    const std::size_t grown = m_capacity + (large ? m_capacity / 8 : m_capacity / 2);
    const std::size_t cap = n > grown ? n : grown;
    void* p = deviceAlloc(cap * sizeof(T));
    deviceFree(m_ptr);
    m_ptr = static_cast<T*>(p);
    m_capacity = cap;
  }

  /// Fills the whole capacity with one byte value (tests poison outputs with 0xFF).
  void poison(int value = 0xFF) {
    if (m_ptr) fillBytes(m_ptr, value, m_capacity * sizeof(T));
  }

  void swap(DeviceBuffer& o) noexcept {
    std::swap(m_ptr, o.m_ptr);
    std::swap(m_capacity, o.m_capacity);
  }

  T* data() { return m_ptr; }
  const T* data() const { return m_ptr; }
  std::size_t capacity() const { return m_capacity; }

 private:
  T* m_ptr = nullptr;
  std::size_t m_capacity = 0;
};

/// Page-locked host memory (cudaMallocHost), grown as DeviceBuffer grows: copies to and from it
/// run at the bus's speed, and MPI sends from it and receives into it.
class PinnedBytes {
 public:
  PinnedBytes() = default;
  ~PinnedBytes();
  PinnedBytes(const PinnedBytes&) = delete;
  PinnedBytes& operator=(const PinnedBytes&) = delete;
  /// n bytes, the old contents discarded.
  std::byte* resize(std::size_t n);
  std::byte* data() { return m_ptr; }
  std::size_t size() const { return m_size; }

 private:
  std::byte* m_ptr = nullptr;
  std::size_t m_capacity = 0, m_size = 0;
};

/// Copies `bytes` from the device into `pinned` on `stream` and waits for that stream alone (not
/// the device, as copyToHost): the numbers a substep waits for, at the bus's speed. Returns
/// pinned.data().
const std::byte* readBack(PinnedBytes& pinned, const void* d_src, std::size_t bytes, Stream stream);

}  // namespace bhviz::sim::cuda
