// libFuzzer target: the Tipsy reader (sim/io/tipsy.cpp) on arbitrary bytes, through the same
// tipsy::parse that readSnapshot calls on a file's contents. Any input must give a snapshot or
// one SnapshotError: never a crash, a sanitizer report or an allocation larger than the input
// allows (libFuzzer's -rss_limit_mb and -malloc_limit_mb catch those).

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "sim/io/snapshot.h"

namespace io = bhviz::sim::io;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const io::Snapshot s = io::tipsy::parse(data, size, "fuzz.tipsy");
    // A dark particle is the smallest record (36 bytes): more particles than the bytes hold
    // would mean the reader invented data.
    if (s.particles.size() == 0 || s.particles.size() * 36 > size) std::abort();
    s.particles.validate();
  } catch (const io::SnapshotError&) {
    // The expected answer to a bad file.
  }
  return 0;
}
