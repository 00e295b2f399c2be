// The format-neutral edge of snapshot I/O: the format from a file's content or its extension,
// the atomic write (PATH.tmp, then rename), and the size checks before a Tipsy body is read.

#include "sim/io/snapshot.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <vector>

namespace bhviz::sim::io {

namespace {

namespace fs = std::filesystem;

std::string inQuotes(const std::string& s) { return "'" + s + "'"; }

// The HDF5 superblock starts at 0, 512, 1024, 2048, … (a user block may precede it).
bool hasHdf5Signature(std::ifstream& f, std::uint64_t size) {
  static constexpr std::array<unsigned char, 8> kSignature{0x89, 'H',  'D',  'F',
                                                           '\r', '\n', 0x1a, '\n'};
  for (std::uint64_t at = 0; at + kSignature.size() <= size && at <= 65536;
       at = at == 0 ? 512 : at * 2) {
    std::array<unsigned char, 8> b{};
    f.clear();
    f.seekg(static_cast<std::streamoff>(at));
    if (!f.read(reinterpret_cast<char*>(b.data()), b.size())) return false;
    if (b == kSignature) return true;
  }
  return false;
}

Snapshot readTipsyFile(std::ifstream& f, std::uint64_t size, const std::string& path) {
  std::array<unsigned char, tipsy::kHeaderProbeBytes> header{};
  const std::size_t headerSize =
      static_cast<std::size_t>(std::min<std::uint64_t>(size, header.size()));
  f.clear();
  f.seekg(0);
  if (!f.read(reinterpret_cast<char*>(header.data()), static_cast<std::streamsize>(headerSize))) {
    throw SnapshotError(inQuotes(path) + ": cannot read the header");
  }
  // Throws unless the header's counts match the file's size: only then is the body read.
  tipsy::checkHeader(header.data(), headerSize, size, path);
  std::vector<unsigned char> data(static_cast<std::size_t>(size));
  f.seekg(0);
  if (!f.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size()))) {
    throw SnapshotError(inQuotes(path) + ": reading failed");
  }
  return tipsy::parse(data.data(), data.size(), path);
}

}  // namespace

Snapshot readSnapshotWithTime(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw SnapshotError(inQuotes(path) + ": no such file");
  if (!fs::is_regular_file(st)) throw SnapshotError(inQuotes(path) + " is not a regular file");
  const std::uint64_t size = fs::file_size(path, ec);
  if (ec) throw SnapshotError(inQuotes(path) + ": cannot read its size (" + ec.message() + ")");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw SnapshotError(inQuotes(path) + ": cannot open for reading");
  if (hasHdf5Signature(f, size)) {
    if (!haveHdf5()) throw SnapshotError(inQuotes(path) + " is HDF5, but this build has no HDF5");
    f.close();
    return hdf5::read(path);
  }
  return readTipsyFile(f, size, path);
}

Particles readSnapshot(const std::string& path) { return readSnapshotWithTime(path).particles; }

SnapshotFormat formatFromExtension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".tipsy" || ext == ".std") return SnapshotFormat::Tipsy;
  if (ext == ".hdf5" || ext == ".h5") {
    if (!haveHdf5()) throw SnapshotError(inQuotes(path) + ": this build has no HDF5");
    return SnapshotFormat::Hdf5;
  }
  throw SnapshotError(inQuotes(path) + ": unknown snapshot extension " + inQuotes(ext) +
                      " (must be .tipsy, .std, .hdf5 or .h5)");
}

void writeSnapshot(const std::string& path, const Particles& p, double time) {
  const SnapshotFormat format = formatFromExtension(path);
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  try {
    if (format == SnapshotFormat::Tipsy) {
      tipsy::write(tmp, p, time);
    } else {
      hdf5::write(tmp, p, time);
    }
  } catch (const SnapshotError& e) {
    fs::remove(tmp, ec);
    // The messages name the temporary; the user asked for `path`.
    std::string what = e.what();
    const std::string from = inQuotes(tmp);
    if (const auto at = what.find(from); at != std::string::npos)
      what.replace(at, from.size(), inQuotes(path));
    throw SnapshotError(what);
  } catch (const std::exception& e) {
    fs::remove(tmp, ec);
    throw SnapshotError(inQuotes(path) + ": " + e.what());
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw SnapshotError(inQuotes(path) + ": cannot rename the temporary file into place (" +
                        ec.message() + ")");
  }
}

}  // namespace bhviz::sim::io
