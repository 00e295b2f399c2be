// libFuzzer target: the GADGET/SWIFT HDF5 reader (sim/io/hdf5.cpp) on arbitrary bytes, opened as
// an in-memory file image (libhdf5's core driver) by hdf5::parse, which shares everything after
// the open with hdf5::read. Any input must give a snapshot or one SnapshotError.
//
// libhdf5 itself is Debian's (not instrumented): a crash inside it shows up as a SEGV, a heap
// overflow inside it may go unseen. Our code around it is instrumented.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "sim/io/snapshot.h"

namespace io = bhviz::sim::io;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const io::Snapshot s = io::hdf5::parse(data, size, "fuzz.hdf5");
    if (s.particles.size() == 0) std::abort();
    s.particles.validate();
  } catch (const io::SnapshotError&) {
    // The expected answer to a bad file.
  }
  return 0;
}
