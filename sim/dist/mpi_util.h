#pragma once
// Private to sim/dist/: the one header that includes <mpi.h>, and the small helpers around it.

#include <mpi.h>

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/particles.h"

namespace bhviz::sim::dist {

/// Throws std::runtime_error naming the call when an MPI call fails.
void checkMpi(int code, const char* call);

/// The MPI datatype of one PackedParticle (committed once).
MPI_Datatype packedParticleType();

/// A committed MPI datatype of `bytes` contiguous bytes (one per size, made once): counts of
/// elements, not of bytes, stay within MPI's int for large arrays.
MPI_Datatype bytesType(std::size_t bytes);

/// Displacements of counts (exclusive prefix sum), checked to fit MPI's int.
std::vector<int> displacements(const std::vector<int>& counts);

/// MPI_COMM_WORLD's duplicate every command of ours runs on.
MPI_Comm jobComm();

/// Gathers one trivially copyable value from every rank on rank 0.
template <typename T>
std::vector<T> gatherToLeader(const T& mine, int rank, int ranks) {
  std::vector<T> all(rank == 0 ? static_cast<std::size_t>(ranks) : 0);
  checkMpi(MPI_Gather(&mine, sizeof(T), MPI_BYTE, all.data(), sizeof(T), MPI_BYTE, 0, jobComm()),
           "MPI_Gather");
  return all;
}

/// Gathers a vector of trivially copyable elements from every rank on rank 0, rank by rank.
template <typename T>
std::vector<T> gatherVectors(const std::vector<T>& mine, int rank, int ranks) {
  if (mine.size() > INT_MAX) throw std::runtime_error("a rank holds more than 2^31 elements");
  const int count = static_cast<int>(mine.size());
  const std::vector<int> counts = gatherToLeader(count, rank, ranks);
  const std::vector<int> displs = rank == 0 ? displacements(counts) : std::vector<int>{};
  std::size_t total = 0;
  for (int c : counts) total += static_cast<std::size_t>(c);
  std::vector<T> all(total);
  const MPI_Datatype type = bytesType(sizeof(T));
  checkMpi(MPI_Gatherv(mine.data(), count, type, all.data(), counts.data(), displs.data(), type, 0,
                       jobComm()),
           "MPI_Gatherv");
  return all;
}

}  // namespace bhviz::sim::dist
