#pragma once
// Private to sim/dist/: the LETs of ranks that each hold their own GPU, moved device to device
// by NCCL (grouped send/recv over NVLink or PCIe on one host, the network between hosts). NCCL
// is optional twice: compiled in where nccl.h was found at configure time (BHVIZ_HAVE_NCCL),
// and loaded at run time (libnccl.so.2, dlopen) where the library is found. Where either is
// missing, or two ranks of a host share a GPU (NCCL refuses that), the LETs go through pinned
// host memory and MPI instead (rank.cpp).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/backend.h"

namespace bhviz::sim::dist {

class NcclLink {
 public:
  /// Collective over the job. The link, or null on every rank (with `why` set) where NCCL
  /// cannot move these ranks' LETs: not built in or not found, a rank without device LETs, two
  /// ranks on one GPU.
  static std::unique_ptr<NcclLink> open(DeviceLets* lets, int rank, int ranks, std::string& why);
  ~NcclLink();
  NcclLink(const NcclLink&) = delete;
  NcclLink& operator=(const NcclLink&) = delete;

  /// Queues the exchange, once the cuts queued on the LETs' stream are done: to each rank r its
  /// sendBytes[r] bytes from `send` at sendAt[r], from it recvBytes[r] into `recv` at
  /// recvAt[r] (device memory). Returns at once; the LETs' stream does not wait for it.
  void start(const std::byte* send, const std::vector<int>& sendBytes,
             const std::vector<int>& sendAt, std::byte* recv, const std::vector<int>& recvBytes,
             const std::vector<int>& recvAt);
  /// Makes the LETs' stream wait for the exchange: work queued on it later reads what arrived.
  void finish();
  /// Queues on `stream` (a cudaStream_t of this rank's GPU: the work queued there before and
  /// after orders it) the exchange of counts in units of `unit` bytes: to each rank r
  /// sendCount[r] units from `send` at unit sendAt[r], from it recvCount[r] into `recv` at unit
  /// recvAt[r] (device memory). The particles of a particle exchange move so.
  void exchangeOn(void* stream, std::size_t unit, const std::byte* send,
                  const std::vector<int>& sendCount, const std::vector<int>& sendAt,
                  std::byte* recv, const std::vector<int>& recvCount,
                  const std::vector<int>& recvAt);

  struct State;  // nccl_link.cpp

 private:
  explicit NcclLink(std::unique_ptr<State> s);
  std::unique_ptr<State> m_s;
};

}  // namespace bhviz::sim::dist
