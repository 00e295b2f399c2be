#include "sim/dist/mpi_util.h"

#include <climits>
#include <map>
#include <mutex>
#include <stdexcept>

namespace bhviz::sim::dist {

void checkMpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, length));
}

MPI_Datatype packedParticleType() { return bytesType(sizeof(PackedParticle)); }

MPI_Datatype bytesType(std::size_t bytes) {
  static std::mutex lock;
  static std::map<std::size_t, MPI_Datatype> types;
  const std::lock_guard<std::mutex> hold(lock);
  auto [it, fresh] = types.try_emplace(bytes, MPI_DATATYPE_NULL);
  if (fresh) {
    checkMpi(MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &it->second),
             "MPI_Type_contiguous");
    checkMpi(MPI_Type_commit(&it->second), "MPI_Type_commit");
  }
  return it->second;
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> d(counts.size(), 0);
  long long at = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (at > INT_MAX) throw std::runtime_error("a message of more than 2^31 elements");
    d[r] = static_cast<int>(at);
    at += counts[r];
  }
  if (at > INT_MAX) throw std::runtime_error("a message of more than 2^31 elements");
  return d;
}

}  // namespace bhviz::sim::dist
