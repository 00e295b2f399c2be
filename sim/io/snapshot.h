#pragma once
// Snapshots in and out: Tipsy (the binary format of Bonsai, ChaNGa and PKDGRAV) and
// GADGET/SWIFT-style HDF5. Readers trust nothing in a file: every count is checked against the
// file's size (or the dataset's extent) before anything is allocated, and every failure is one
// SnapshotError naming the file.
//
// What survives a round trip (docs/ARCHITECTURE.md, "Snapshots"):
//   Tipsy: positions, velocities, masses, time. Ids become the file order (dark first, then
//     stars, each sorted by id). Components: disk and bulge are written as star particles, halo
//     and sphere as dark; read back, stars (and gas) are Disk, dark particles are Halo when the
//     file has stars and Sphere when it has none. The galaxy index is lost (Tipsy has no field
//     for it).
//   HDF5: everything but accelerations: ids (ParticleIDs, ranked to 0..N-1 when read; the file
//     order, with a note, when some repeat), and the full tag in an extra dataset BhvizTag that
//     other codes ignore.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/particles.h"

namespace bhviz::sim::io {

/// A snapshot that cannot be read or written. what() is one line naming the file.
struct SnapshotError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class SnapshotFormat { Tipsy, Hdf5 };

/// The largest particle count a reader accepts: ids are 32-bit, Tipsy counts are ints.
inline constexpr std::uint64_t kMaxSnapshotParticles = (std::uint64_t{1} << 31) - 1;

/// A snapshot's particles (ids, tags as above; accelerations and bins zero) and its time.
struct Snapshot {
  Particles particles;
  double time = 0.0;  ///< simulation time stored in the file [time]
  /// What the reader assumed or changed in a file it accepted (repeated HDF5 ParticleIDs
  /// renumbered, Tipsy's unpadded header assumed): one line each, naming the file, for the
  /// caller to show. Empty for a file read as it is.
  std::vector<std::string> notes;
};

/// Reads a Tipsy (either byte order) or HDF5 snapshot, the format told by the content. The
/// particles pass Particles::validate. Throws SnapshotError.
Snapshot readSnapshotWithTime(const std::string& path);
Particles readSnapshot(const std::string& path);

/// The format a file name asks for: .tipsy or .std → Tipsy, .hdf5 or .h5 → HDF5. Throws
/// SnapshotError for anything else.
SnapshotFormat formatFromExtension(const std::string& path);

/// Writes `p` at `time` in the format of the extension (standard, big-endian Tipsy; or HDF5),
/// to PATH.tmp and then renamed to PATH. Throws SnapshotError and leaves no temporary behind.
void writeSnapshot(const std::string& path, const Particles& p, double time);

/// Whether this build can read and write HDF5 (Debian's libhdf5).
bool haveHdf5();

// The format modules, for the tests and the fuzz targets.
namespace tipsy {
/// Parses a whole Tipsy file held in memory; `name` is used in messages.
Snapshot parse(const unsigned char* data, std::size_t size, const std::string& name);
/// How many of a file's first bytes checkHeader wants: the header, and the first record's
/// mass, position and velocity as the 28-byte header variant would read them.
inline constexpr std::size_t kHeaderProbeBytes = 56;
/// Checks a Tipsy header (the first bytes of a file of `fileSize` bytes: kHeaderProbeBytes, or
/// the whole file when shorter) and returns the number of particles, or throws SnapshotError.
/// Needs at least 28 bytes.
std::uint64_t checkHeader(const unsigned char* header, std::size_t headerSize,
                          std::uint64_t fileSize, const std::string& name);
void write(const std::string& path, const Particles& p, double time);
}  // namespace tipsy

namespace hdf5 {
/// Reads an HDF5 snapshot. libhdf5 runs in a child process (sim/io/isolated.h): it can crash on
/// hostile files, which then give one SnapshotError instead of ending bhviz.
Snapshot read(const std::string& path);
/// Parses a whole HDF5 file held in memory (libhdf5's core driver on a copy of the bytes), with
/// the same reader as files on disk, in a child process as read; `name` is used in messages.
Snapshot parse(const unsigned char* data, std::size_t size, const std::string& name);
/// parse in this process: for the fuzzer, which needs the reader's coverage (a crash inside
/// libhdf5 then ends the process).
Snapshot parseInProcess(const unsigned char* data, std::size_t size, const std::string& name);
void write(const std::string& path, const Particles& p, double time);
}  // namespace hdf5

}  // namespace bhviz::sim::io
