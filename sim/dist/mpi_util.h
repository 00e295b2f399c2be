#pragma once
// Private to sim/dist/: the one header that includes <mpi.h>, and the small helpers around it.

#include <mpi.h>

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

}  // namespace bhviz::sim::dist
