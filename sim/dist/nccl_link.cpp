#include "sim/dist/nccl_link.h"

#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "sim/dist/mpi_util.h"

#if BHVIZ_HAVE_NCCL
#include <dlfcn.h>
#include <nccl.h>  // (it includes the CUDA runtime's header: its calls take a cudaStream_t)
#endif

namespace bhviz::sim::dist {

#if BHVIZ_HAVE_NCCL

namespace {

/// Whether `mine` holds on every rank (collective).
bool everyRank(bool mine) {
  int all = mine ? 1 : 0;
  checkMpi(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, jobComm()), "MPI_Allreduce");
  return all == 1;
}

/// NCCL's entry points, from libnccl.so.2 loaded at run time: a build that found nccl.h runs
/// where the library is absent (the LETs then go through the host).
struct NcclApi {
  decltype(&ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&ncclCommInitRank) commInitRank = nullptr;
  decltype(&ncclCommDestroy) commDestroy = nullptr;
  decltype(&ncclGroupStart) groupStart = nullptr;
  decltype(&ncclGroupEnd) groupEnd = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGetErrorString) errorString = nullptr;
};

/// The library, loaded once per process; null with `why` where it is not there.
const NcclApi* loadNccl(std::string& why) {
  static std::string error;
  static const NcclApi* api = []() -> const NcclApi* {
    void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      error = "libnccl.so.2 not found";
      return nullptr;
    }
    static NcclApi a;
    auto find = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (fn == nullptr && error.empty()) error = std::string("libnccl.so.2 lacks ") + name;
    };
    find(a.getUniqueId, "ncclGetUniqueId");
    find(a.commInitRank, "ncclCommInitRank");
    find(a.commDestroy, "ncclCommDestroy");
    find(a.groupStart, "ncclGroupStart");
    find(a.groupEnd, "ncclGroupEnd");
    find(a.send, "ncclSend");
    find(a.recv, "ncclRecv");
    find(a.errorString, "ncclGetErrorString");
    return error.empty() ? &a : nullptr;
  }();
  why = error;
  return api;
}

void checkNccl(const NcclApi& api, ncclResult_t r, const char* call) {
  if (r != ncclSuccess) {
    throw std::runtime_error(std::string(call) + " failed: " + api.errorString(r));
  }
}

/// The host and the GPU of a rank, as they travel.
struct Placement {
  char text[MPI_MAX_PROCESSOR_NAME + 64] = {};
};

/// NCCL's id of a new communicator, and whether rank 0 could make it.
struct IdMessage {
  ncclUniqueId id{};
  int ok = 0;
};

}  // namespace

struct NcclLink::State {
  const NcclApi* api = nullptr;
  ncclComm_t comm = nullptr;
  DeviceLets* lets = nullptr;     // the backend's: its streams order the exchange
  cudaStream_t moving = nullptr;  // its exchange stream: the local walk runs beside it
  int ranks = 0;

  ~State() {
    if (comm) (void)api->commDestroy(comm);
  }
};

std::unique_ptr<NcclLink> NcclLink::open(DeviceLets* lets, int rank, int ranks, std::string& why) {
  if (ranks < 2) {
    why = "one rank";
    return nullptr;
  }
  if (!everyRank(lets != nullptr)) {
    why = "a rank's trees are on the host";
    return nullptr;
  }
  std::string loadError;
  const NcclApi* api = loadNccl(loadError);
  if (!everyRank(api != nullptr)) {
    why = api == nullptr ? loadError : "libnccl.so.2 not found on another rank";
    return nullptr;
  }
  // NCCL takes one GPU per rank: two ranks of a host on one GPU use the host path.
  Placement mine;
  int nameLength = 0;
  checkMpi(MPI_Get_processor_name(mine.text, &nameLength), "MPI_Get_processor_name");
  const std::string placed = std::string(mine.text, nameLength) + "/" + lets->deviceId();
  std::strncpy(mine.text, placed.c_str(), sizeof mine.text - 1);
  std::vector<Placement> all(static_cast<std::size_t>(ranks));
  checkMpi(
      MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, jobComm()),
      "MPI_Allgather");
  bool shared = false;
  for (int r = 0; r < ranks; ++r) {
    shared =
        shared || (r != rank && std::strcmp(all[static_cast<std::size_t>(r)].text, mine.text) == 0);
  }
  if (!everyRank(!shared)) {
    why = "ranks share a GPU";
    return nullptr;
  }
  IdMessage message;
  if (rank == 0) message.ok = api->getUniqueId(&message.id) == ncclSuccess ? 1 : 0;
  checkMpi(MPI_Bcast(&message, sizeof message, MPI_BYTE, 0, jobComm()), "MPI_Bcast");
  if (message.ok == 0) throw std::runtime_error("ncclGetUniqueId failed on rank 0");
  auto s = std::make_unique<State>();
  s->api = api;
  s->ranks = ranks;
  s->lets = lets;
  s->moving = static_cast<cudaStream_t>(lets->exchangeStream());
  checkNccl(*api, api->commInitRank(&s->comm, ranks, message.id, rank), "ncclCommInitRank");
  why.clear();
  return std::unique_ptr<NcclLink>(new NcclLink(std::move(s)));
}

namespace {

/// One grouped send/recv per rank pair: counts and places in units of `unit` bytes.
void sendAndReceive(const NcclApi& api, ncclComm_t comm, int ranks, cudaStream_t stream,
                    std::size_t unit, const std::byte* send, const std::vector<int>& sendCount,
                    const std::vector<int>& sendAt, std::byte* recv,
                    const std::vector<int>& recvCount, const std::vector<int>& recvAt) {
  checkNccl(api, api.groupStart(), "ncclGroupStart");
  for (int r = 0; r < ranks; ++r) {
    const auto k = static_cast<std::size_t>(r);
    if (sendCount[k] > 0) {
      checkNccl(api,
                api.send(send + unit * static_cast<std::size_t>(sendAt[k]),
                         unit * static_cast<std::size_t>(sendCount[k]), ncclChar, r, comm, stream),
                "ncclSend");
    }
    if (recvCount[k] > 0) {
      checkNccl(api,
                api.recv(recv + unit * static_cast<std::size_t>(recvAt[k]),
                         unit * static_cast<std::size_t>(recvCount[k]), ncclChar, r, comm, stream),
                "ncclRecv");
    }
  }
  checkNccl(api, api.groupEnd(), "ncclGroupEnd");
}

}  // namespace

void NcclLink::start(const std::byte* send, const std::vector<int>& sendBytes,
                     const std::vector<int>& sendAt, std::byte* recv,
                     const std::vector<int>& recvBytes, const std::vector<int>& recvAt) {
  State& s = *m_s;
  s.lets->exchangeAfterCuts();
  sendAndReceive(*s.api, s.comm, s.ranks, s.moving, 1, send, sendBytes, sendAt, recv, recvBytes,
                 recvAt);
}

void NcclLink::exchangeOn(void* stream, std::size_t unit, const std::byte* send,
                          const std::vector<int>& sendCount, const std::vector<int>& sendAt,
                          std::byte* recv, const std::vector<int>& recvCount,
                          const std::vector<int>& recvAt) {
  State& s = *m_s;
  sendAndReceive(*s.api, s.comm, s.ranks, static_cast<cudaStream_t>(stream), unit, send, sendCount,
                 sendAt, recv, recvCount, recvAt);
}

void NcclLink::finish() { m_s->lets->walkAfterExchange(); }

#else  // !BHVIZ_HAVE_NCCL

struct NcclLink::State {};

std::unique_ptr<NcclLink> NcclLink::open(DeviceLets* lets, int rank, int ranks, std::string& why) {
  (void)lets;
  (void)rank;
  why = ranks < 2 ? "one rank" : "built without NCCL (nccl.h not found at configure time)";
  return nullptr;
}

void NcclLink::start(const std::byte*, const std::vector<int>&, const std::vector<int>&, std::byte*,
                     const std::vector<int>&, const std::vector<int>&) {
  throw std::logic_error("NcclLink without NCCL");
}

void NcclLink::finish() { throw std::logic_error("NcclLink without NCCL"); }

void NcclLink::exchangeOn(void*, std::size_t, const std::byte*, const std::vector<int>&,
                          const std::vector<int>&, std::byte*, const std::vector<int>&,
                          const std::vector<int>&) {
  throw std::logic_error("NcclLink without NCCL");
}

#endif

NcclLink::NcclLink(std::unique_ptr<State> s) : m_s(std::move(s)) {}
NcclLink::~NcclLink() = default;

}  // namespace bhviz::sim::dist
