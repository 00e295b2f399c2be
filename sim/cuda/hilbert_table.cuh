#pragma once
// The Hilbert keys' table (sim/common/hilbert_table.h) in the device's global memory: the keys
// kernel copies it into shared memory, the rebuild around the targets reads it as it is (few
// particles). A copy in each file that includes this (the CUDA files compile apart).
#include "sim/common/hilbert_table.h"

namespace bhviz::sim::cuda {

static __device__ const HilbertTable kDeviceHilbertTable = kHilbertTable;

}  // namespace bhviz::sim::cuda
