// Built instead of hdf5.cpp when CMake finds no HDF5: the Tipsy path still works, and an HDF5
// file or extension gets one clear line.

#include "sim/io/snapshot.h"

namespace bhviz::sim::io {

bool haveHdf5() { return false; }

namespace hdf5 {
Snapshot read(const std::string& path) {
  throw SnapshotError("'" + path + "' is HDF5, but this build has no HDF5 (install libhdf5-dev)");
}
Snapshot parse(const unsigned char*, std::size_t, const std::string& name) { return read(name); }
Snapshot parseInProcess(const unsigned char* data, std::size_t size, const std::string& name) {
  return parse(data, size, name);
}
void write(const std::string& path, const Particles&, double) {
  throw SnapshotError("'" + path + "': this build has no HDF5 (install libhdf5-dev)");
}
}  // namespace hdf5

}  // namespace bhviz::sim::io
