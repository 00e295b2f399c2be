#pragma once
// A snapshot read in a child process. Debian's libhdf5 1.10 crashes on some hostile files (the
// fuzzer found a SEGV inside H5F__accum_read; tests/data/fuzz/hdf5-*): a library we cannot fix
// must not take bhviz, and the state it holds, down with it. The child reads and sends the
// snapshot (particles, time, notes) back through a pipe; a crash there becomes one SnapshotError.
// POSIX only.

#include <cstddef>
#include <functional>
#include <string>

#include "sim/io/snapshot.h"

namespace bhviz::sim::io {

/// Runs `read` in a forked child and returns its snapshot. A SnapshotError thrown there comes
/// back as the same message; a child that dies (a signal, or exiting before it answered) gives
/// SnapshotError naming `name` and the signal. The child only runs `read`, then _exit: no
/// destructor, no atexit handler, no GPU call. `fileBytes` (the file's size) bounds what the
/// child may take: new data memory of 4 × fileBytes + 256 MiB (a hostile header that makes the
/// library ask for gigabytes gets a failed allocation, not the machine's memory) and
/// 60 s + 1 s per 20 MB of CPU time (a library caught in a loop is stopped).
Snapshot readIsolated(const std::string& name, std::size_t fileBytes,
                      const std::function<Snapshot()>& read);

}  // namespace bhviz::sim::io
