// libFuzzer target: the GADGET/SWIFT HDF5 reader (sim/io/hdf5.cpp) on arbitrary bytes, opened as
// an in-memory file image (libhdf5's core driver), which shares everything after the open with
// hdf5::read. Any input must give a snapshot or one SnapshotError.
//
// Fuzzed in this process (hdf5::parseInProcess), so that libFuzzer sees the reader's coverage.
// libhdf5 itself is Debian's (not instrumented) and crashes on some hostile files; bhviz runs it
// in a child process (hdf5::parse, sim/io/isolated.h). With BHVIZ_FUZZ_ISOLATED=1 this target
// takes that path instead and prints its answer (one line, "bhviz-fuzz: ..."): scripts/fuzz.sh
// re-runs a crash that happened inside libhdf5 that way, and only a crash that bhviz itself would
// suffer fails the run (tests/fuzz/triage.sh).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "sim/io/snapshot.h"

namespace io = bhviz::sim::io;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool isolated = [] {
    const char* v = std::getenv("BHVIZ_FUZZ_ISOLATED");
    return v != nullptr && v[0] == '1';
  }();
  try {
    const io::Snapshot s = isolated ? io::hdf5::parse(data, size, "fuzz.hdf5")
                                    : io::hdf5::parseInProcess(data, size, "fuzz.hdf5");
    if (s.particles.size() == 0) std::abort();
    s.particles.validate();
    if (isolated) std::fprintf(stderr, "bhviz-fuzz: read %zu particles\n", s.particles.size());
  } catch (const io::SnapshotError& e) {
    // The expected answer to a bad file.
    if (isolated) std::fprintf(stderr, "bhviz-fuzz: refused: %s\n", e.what());
  }
  return 0;
}
