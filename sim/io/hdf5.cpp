// GADGET/SWIFT-style HDF5 through Debian's libhdf5 (C API): a Header group (NumPart_ThisFile,
// NumPart_Total, MassTable, Time) and groups PartType0..5 with Coordinates, Velocities, Masses
// (or the MassTable entry), ParticleIDs. bhviz writes halo and sphere particles as PartType1,
// disk as PartType2, bulge as PartType3, plus a BhvizTag dataset (the full tag) that other
// codes ignore. Read back without BhvizTag: PartType1 → Halo (Sphere when it is the only type),
// 0, 2 and 4 → Disk, 3 and 5 → Bulge. ParticleIDs are ranked to 0..N-1 (their order kept);
// when some repeat, the particles keep the file order and the snapshot carries a note saying so.

#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <vector>

#include "sim/io/isolated.h"
#include "sim/io/particle_check.h"
#include "sim/io/snapshot.h"

namespace bhviz::sim::io {

bool haveHdf5() { return true; }

namespace hdf5 {

namespace {

constexpr int kTypes = 6;
/// A dataset may store its values compressed up to this ratio; a file whose datasets claim
/// more data than this allows is refused before anything is allocated.
constexpr double kMaxCompression = 256.0;

// One owner per HDF5 handle kind, so every early throw closes what was opened.
struct Handle {
  hid_t id = H5I_INVALID_HID;
  herr_t (*close)(hid_t) = nullptr;
  Handle(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id(o.id), close(o.close) { o.id = H5I_INVALID_HID; }
  Handle& operator=(Handle&&) = delete;
  ~Handle() {
    if (id >= 0 && close) close(id);
  }
  bool ok() const { return id >= 0; }
  operator hid_t() const { return id; }
};

std::string inQuotes(const std::string& s) { return "'" + s + "'"; }

void quietErrors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw SnapshotError(inQuotes(path) + ": " + what);
}

bool exists(hid_t loc, const char* name) { return H5Lexists(loc, name, H5P_DEFAULT) > 0; }

// A numeric attribute of `n` elements, converted to `memType`.
template <typename T>
bool readAttribute(hid_t loc, const char* name, hid_t memType, T* out, hsize_t n,
                   const std::string& path) {
  if (H5Aexists(loc, name) <= 0) return false;
  Handle a(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
  if (!a.ok()) fail(path, std::string("cannot open the attribute Header/") + name);
  Handle space(H5Aget_space(a), H5Sclose);
  const hssize_t count = H5Sget_simple_extent_npoints(space);
  if (count != static_cast<hssize_t>(n)) {
    fail(path, std::string("Header/") + name + " has " + std::to_string(count) +
                   " values, expected " + std::to_string(n));
  }
  if (H5Aread(a, memType, out) < 0) fail(path, std::string("cannot read Header/") + name);
  return true;
}

// Opens group/name and checks it is `rows` × `cols` (cols 0: one-dimensional) and stores
// enough bytes for that; only then may the caller allocate.
Handle openDataset(hid_t group, const std::string& groupName, const char* name, hsize_t rows,
                   hsize_t cols, const std::string& path) {
  const std::string full = groupName + "/" + name;
  if (!exists(group, name)) fail(path, full + " is missing");
  Handle d(H5Dopen2(group, name, H5P_DEFAULT), H5Dclose);
  if (!d.ok()) fail(path, "cannot open " + full);
  Handle space(H5Dget_space(d), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space);
  std::array<hsize_t, 2> dims{0, 0};
  const int want = cols == 0 ? 1 : 2;
  if (rank != want || H5Sget_simple_extent_dims(space, dims.data(), nullptr) != want ||
      dims[0] != rows || (cols != 0 && dims[1] != cols)) {
    fail(path, full + " does not have " + std::to_string(rows) +
                   (cols ? " rows of " + std::to_string(cols) : std::string(" values")) +
                   " (the header's count)");
  }
  Handle type(H5Dget_type(d), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type);
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) fail(path, full + " is not numeric");
  // External and virtual storage would read other files (any path the file names): refused.
  Handle dcpl(H5Dget_create_plist(d), H5Pclose);
  const H5D_layout_t layout = dcpl.ok() ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
  if (layout != H5D_CONTIGUOUS && layout != H5D_CHUNKED && layout != H5D_COMPACT) {
    fail(path, full + " does not keep its data in the file");
  }
  if (H5Pget_external_count(dcpl) != 0) fail(path, full + " keeps its data in external files");
  // The storage size comes from the file's own layout message, so it may lie too: it must fit
  // in the file, and the values it claims must fit in it at the largest compression allowed.
  const hsize_t stored = H5Dget_storage_size(d);
  Handle file(H5Iget_file_id(d), H5Fclose);
  hsize_t fileSize = 0;
  if (!file.ok() || H5Fget_filesize(file, &fileSize) < 0 || stored > fileSize) {
    fail(path,
         full + " claims " + std::to_string(stored) + " bytes of storage, more than the file has");
  }
  const double raw = static_cast<double>(rows) * static_cast<double>(cols ? cols : 1) *
                     static_cast<double>(H5Tget_size(type));
  if (static_cast<double>(stored) * kMaxCompression < raw) {
    fail(path, full + " claims " + std::to_string(rows) + " rows but stores only " +
                   std::to_string(stored) + " bytes");
  }
  return d;
}

template <typename T>
std::vector<T> readAll(hid_t d, hid_t memType, std::size_t n, const std::string& what,
                       const std::string& path) {
  std::vector<T> v(n);
  if (n > 0 && H5Dread(d, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) {
    fail(path, "cannot read " + what);
  }
  return v;
}

Component defaultComponent(int type, bool onlyDark) {
  switch (type) {
    case 1:
      return onlyDark ? Component::Sphere : Component::Halo;
    case 3:
    case 5:
      return Component::Bulge;
    default:
      return Component::Disk;
  }
}

// The file's ids ranked to 0..N-1 (their order kept). When some repeat the particles keep the
// file order, and the returned note says so; otherwise it is empty.
std::string assignIds(Particles& p, const std::vector<std::uint64_t>& fileIds,
                      const std::string& path) {
  std::vector<std::size_t> order(fileIds.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return fileIds[a] < fileIds[b]; });
  std::size_t repeated = 0;
  std::uint64_t smallest = 0;
  for (std::size_t r = 1; r < order.size(); ++r) {
    const bool same = fileIds[order[r]] == fileIds[order[r - 1]];
    const bool first = r < 2 || fileIds[order[r - 1]] != fileIds[order[r - 2]];
    if (same && first && repeated++ == 0) smallest = fileIds[order[r]];
  }
  if (repeated > 0) {
    return inQuotes(path) + ": " + std::to_string(repeated) + " ParticleID" +
           (repeated > 1 ? "s appear" : " appears") +
           " more than once (the smallest: " + std::to_string(smallest) +
           "); particles numbered 0..N-1 in file order instead";
  }
  for (std::size_t r = 0; r < order.size(); ++r) p.id[order[r]] = static_cast<std::uint32_t>(r);
  return "";
}

// What the Header group says.
struct Header {
  std::array<std::uint64_t, kTypes> counts{};
  std::array<double, kTypes> massTable{};
  double time = 0.0;
  std::uint64_t total = 0;
};

Header readHeader(hid_t file, const std::string& path) {
  if (!exists(file, "Header")) fail(path, "no Header group: not a GADGET/SWIFT snapshot");
  Handle group(H5Gopen2(file, "Header", H5P_DEFAULT), H5Gclose);
  if (!group.ok()) fail(path, "cannot open the Header group");
  Header h;
  if (!readAttribute(group, "NumPart_ThisFile", H5T_NATIVE_UINT64, h.counts.data(), kTypes, path)) {
    fail(path, "Header/NumPart_ThisFile is missing");
  }
  readAttribute(group, "MassTable", H5T_NATIVE_DOUBLE, h.massTable.data(), kTypes, path);
  readAttribute(group, "Time", H5T_NATIVE_DOUBLE, &h.time, 1, path);
  if (!std::isfinite(h.time)) {
    fail(path, "Header/Time is " + std::to_string(h.time) + ", not finite");
  }
  for (const std::uint64_t c : h.counts) {
    if (c > kMaxSnapshotParticles || (h.total += c) > kMaxSnapshotParticles) {
      fail(path,
           "the header claims more than " + std::to_string(kMaxSnapshotParticles) + " particles");
    }
  }
  if (h.total == 0) fail(path, "the header claims no particles");
  return h;
}

// The types the header counts, each group's datasets checked against its count: only then may
// the caller allocate the particles.
std::vector<int> checkGroups(hid_t file, const Header& h, const std::string& path) {
  std::vector<int> types;
  for (int t = 0; t < kTypes; ++t) {
    const hsize_t n = h.counts[static_cast<std::size_t>(t)];
    if (n == 0) continue;
    const std::string name = "PartType" + std::to_string(t);
    if (!exists(file, name.c_str())) fail(path, name + " is missing (the header counts it)");
    Handle g(H5Gopen2(file, name.c_str(), H5P_DEFAULT), H5Gclose);
    openDataset(g, name, "Coordinates", n, 3, path);
    openDataset(g, name, "Velocities", n, 3, path);
    if (exists(g, "Masses")) {
      openDataset(g, name, "Masses", n, 0, path);
    } else if (!(h.massTable[static_cast<std::size_t>(t)] > 0.0)) {
      fail(path, name + " has no Masses and MassTable[" + std::to_string(t) + "] is not > 0");
    }
    if (exists(g, "ParticleIDs")) openDataset(g, name, "ParticleIDs", n, 0, path);
    if (exists(g, "BhvizTag")) openDataset(g, name, "BhvizTag", n, 0, path);
    types.push_back(t);
  }
  return types;
}

// A particle as the file names it: by its ParticleID when the group has them.
std::string particleName(const std::string& group, std::size_t row,
                         const std::vector<std::uint64_t>& ids) {
  const std::string where = group + " row " + std::to_string(row);
  return ids.empty() ? where : "ParticleID " + std::to_string(ids[row]) + " (" + where + ")";
}

// One group's particles, into p from index `at` on; its ParticleIDs (empty when it has none).
std::vector<std::uint64_t> readGroup(hid_t file, int t, const Header& h, Particles& p,
                                     std::size_t at, const std::string& path) {
  const std::string name = "PartType" + std::to_string(t);
  Handle g(H5Gopen2(file, name.c_str(), H5P_DEFAULT), H5Gclose);
  const auto n = static_cast<std::size_t>(h.counts[static_cast<std::size_t>(t)]);
  auto dataset = [&](const char* ds, hsize_t cols, hid_t memType, auto zero) {
    Handle d = openDataset(g, name, ds, n, cols, path);
    return readAll<decltype(zero)>(d, memType, n * (cols ? cols : 1), name + "/" + ds, path);
  };
  const std::vector<float> x = dataset("Coordinates", 3, H5T_NATIVE_FLOAT, 0.0f);
  const std::vector<float> v = dataset("Velocities", 3, H5T_NATIVE_FLOAT, 0.0f);
  const std::vector<float> m =
      exists(g, "Masses")
          ? dataset("Masses", 0, H5T_NATIVE_FLOAT, 0.0f)
          : std::vector<float>(n, static_cast<float>(h.massTable[static_cast<std::size_t>(t)]));
  const std::vector<std::uint8_t> tags =
      exists(g, "BhvizTag") ? dataset("BhvizTag", 0, H5T_NATIVE_UINT8, std::uint8_t{0})
                            : std::vector<std::uint8_t>{};
  std::vector<std::uint64_t> ids =
      exists(g, "ParticleIDs") ? dataset("ParticleIDs", 0, H5T_NATIVE_UINT64, std::uint64_t{0})
                               : std::vector<std::uint64_t>{};
  const bool onlyDark = h.counts[1] == h.total;
  const std::uint8_t fallback = makeTag(defaultComponent(t, onlyDark), 0);
  for (std::size_t k = 0; k < n; ++k, ++at) {
    p.posMass[at] = {x[3 * k], x[3 * k + 1], x[3 * k + 2], m[k]};
    p.vel[at] = {v[3 * k], v[3 * k + 1], v[3 * k + 2], 0.0f};
    if (const char* problem = valueProblem(p.posMass[at], p.vel[at])) {
      fail(path, particleName(name, k, ids) + " " + problem);
    }
    p.accPot[at] = {0.0f, 0.0f, 0.0f, 0.0f};
    p.id[at] = static_cast<std::uint32_t>(at);
    p.tag[at] = tags.empty() ? fallback : tags[k];
    p.bin[at] = 0;
  }
  return ids;
}

// The reader proper, for a file opened from disk (read) or from memory (parse).
Snapshot readOpen(hid_t file, const std::string& path) {
  const Header h = readHeader(file, path);
  const std::vector<int> types = checkGroups(file, h, path);
  Snapshot s;
  s.time = h.time;
  Particles& p = s.particles;
  p.resize(static_cast<std::size_t>(h.total));
  std::vector<std::uint64_t> fileIds;
  bool allIds = true;
  std::size_t at = 0;
  for (const int t : types) {
    const std::vector<std::uint64_t> ids = readGroup(file, t, h, p, at, path);
    at += static_cast<std::size_t>(h.counts[static_cast<std::size_t>(t)]);
    allIds = allIds && !ids.empty();
    fileIds.insert(fileIds.end(), ids.begin(), ids.end());
  }
  std::string note = allIds ? assignIds(p, fileIds, path) : "";
  if (!note.empty()) s.notes.push_back(std::move(note));
  try {
    p.validate();
  } catch (const std::invalid_argument& e) {
    fail(path, e.what());
  }
  return s;
}

Snapshot readInProcess(const std::string& path) {
  quietErrors();
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) fail(path, "cannot open as HDF5 (corrupt or truncated)");
  return readOpen(file, path);
}

}  // namespace

// The core (in-memory) driver opened on a copy of the bytes as its file image: the library's
// own way to read an image without a file, and the same readOpen as files from disk. Nothing
// is written back (read-only, no backing store).
Snapshot parseInProcess(const unsigned char* data, std::size_t size, const std::string& name) {
  quietErrors();
  if (size == 0) fail(name, "cannot open as HDF5 (empty)");
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok() || H5Pset_fapl_core(fapl, 64 * 1024, 0) < 0 ||
      H5Pset_file_image(fapl, const_cast<unsigned char*>(data), size) < 0) {
    fail(name, "cannot set up an in-memory HDF5 image");
  }
  Handle file(H5Fopen(name.c_str(), H5F_ACC_RDONLY, fapl), H5Fclose);
  if (!file.ok()) fail(name, "cannot open as HDF5 (corrupt or truncated)");
  return readOpen(file, name);
}

// libhdf5 runs in a child process (sim/io/isolated.h): it can crash on a hostile file.
Snapshot read(const std::string& path) {
  std::error_code e;
  const std::uintmax_t bytes = std::filesystem::file_size(path, e);
  return readIsolated(path, e ? 0 : static_cast<std::size_t>(bytes),
                      [&] { return readInProcess(path); });
}

Snapshot parse(const unsigned char* data, std::size_t size, const std::string& name) {
  return readIsolated(name, size, [&] { return parseInProcess(data, size, name); });
}

namespace {

int partType(std::uint8_t tag) {
  switch (tagComponent(tag)) {
    case Component::Disk:
      return 2;
    case Component::Bulge:
      return 3;
    default:
      return 1;
  }
}

void writeAttribute(hid_t loc, const char* name, hid_t fileType, hid_t memType, const void* data,
                    hsize_t n, const std::string& path) {
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle a(H5Acreate2(loc, name, fileType, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!a.ok() || H5Awrite(a, memType, data) < 0)
    fail(path, std::string("cannot write Header/") + name);
}

void writeDataset(hid_t group, const char* name, hid_t fileType, hid_t memType, const void* data,
                  hsize_t rows, hsize_t cols, const std::string& path) {
  const std::array<hsize_t, 2> dims{rows, cols};
  Handle space(H5Screate_simple(cols ? 2 : 1, dims.data(), nullptr), H5Sclose);
  Handle d(H5Dcreate2(group, name, fileType, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
           H5Dclose);
  if (!d.ok() || H5Dwrite(d, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    fail(path, std::string("cannot write ") + name);
  }
}

}  // namespace

void write(const std::string& path, const Particles& p, double time) {
  quietErrors();
  std::array<std::vector<std::size_t>, kTypes> members;
  for (std::size_t i = 0; i < p.size(); ++i)
    members[static_cast<std::size_t>(partType(p.tag[i]))].push_back(i);
  for (auto& m : members) {
    std::sort(m.begin(), m.end(), [&](std::size_t a, std::size_t b) { return p.id[a] < p.id[b]; });
  }
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) fail(path, "cannot create");
  {
    Handle header(H5Gcreate2(file, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!header.ok()) fail(path, "cannot create the Header group");
    std::array<std::uint32_t, kTypes> counts{}, high{};
    for (std::size_t t = 0; t < kTypes; ++t)
      counts[t] = static_cast<std::uint32_t>(members[t].size());
    const std::array<double, kTypes> massTable{};
    const int files = 1;
    const double zero = 0.0;
    writeAttribute(header, "NumPart_ThisFile", H5T_STD_U32LE, H5T_NATIVE_UINT32, counts.data(),
                   kTypes, path);
    writeAttribute(header, "NumPart_Total", H5T_STD_U32LE, H5T_NATIVE_UINT32, counts.data(), kTypes,
                   path);
    writeAttribute(header, "NumPart_Total_HighWord", H5T_STD_U32LE, H5T_NATIVE_UINT32, high.data(),
                   kTypes, path);
    writeAttribute(header, "MassTable", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, massTable.data(), kTypes,
                   path);
    writeAttribute(header, "Time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &time, 1, path);
    writeAttribute(header, "Redshift", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &zero, 1, path);
    writeAttribute(header, "NumFilesPerSnapshot", H5T_STD_I32LE, H5T_NATIVE_INT, &files, 1, path);
  }
  for (std::size_t t = 0; t < kTypes; ++t) {
    const std::vector<std::size_t>& m = members[t];
    if (m.empty()) continue;
    const std::string name = "PartType" + std::to_string(t);
    Handle g(H5Gcreate2(file, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!g.ok()) fail(path, "cannot create " + name);
    std::vector<float> x, v, mass;
    std::vector<std::uint32_t> ids;
    std::vector<std::uint8_t> tags;
    for (const std::size_t i : m) {
      const Vec4& a = p.posMass[i];
      const Vec4& b = p.vel[i];
      x.insert(x.end(), {a.x, a.y, a.z});
      v.insert(v.end(), {b.x, b.y, b.z});
      mass.push_back(a.w);
      ids.push_back(p.id[i]);
      tags.push_back(p.tag[i]);
    }
    const hsize_t n = m.size();
    writeDataset(g, "Coordinates", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, x.data(), n, 3, path);
    writeDataset(g, "Velocities", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, v.data(), n, 3, path);
    writeDataset(g, "Masses", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, mass.data(), n, 0, path);
    writeDataset(g, "ParticleIDs", H5T_STD_U32LE, H5T_NATIVE_UINT32, ids.data(), n, 0, path);
    writeDataset(g, "BhvizTag", H5T_STD_U8LE, H5T_NATIVE_UINT8, tags.data(), n, 0, path);
  }
  if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) fail(path, "writing failed");
}

}  // namespace hdf5

}  // namespace bhviz::sim::io
