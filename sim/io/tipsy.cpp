// Tipsy: a 32-byte header {double time; int nbodies, ndim, nsph, ndark, nstar, pad}, then the
// gas, dark and star records, all 4-byte floats. "Standard" files are big-endian (XDR), native
// ones little-endian; there is no magic number, so the byte order is the one under which the
// header is consistent: ndim 3, non-negative counts summing to nbodies, and the file exactly as
// long as those counts say. Some writers omit the pad (28-byte header); both are accepted, the
// padded one first. A padded file 4 bytes short has the size of an unpadded one: it is told
// apart by the first record of the unpadded reading (its mass would be the pad word, 0), and an
// unpadded read says so (a note, and in any message about a particle).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>
#include <optional>
#include <vector>

#include "sim/io/particle_check.h"
#include "sim/io/snapshot.h"

namespace bhviz::sim::io::tipsy {

namespace {

constexpr std::size_t kGasFloats = 12;   // mass, pos[3], vel[3], rho, temp, hsmooth, metals, phi
constexpr std::size_t kDarkFloats = 9;   // mass, pos[3], vel[3], eps, phi
constexpr std::size_t kStarFloats = 11;  // mass, pos[3], vel[3], metals, tform, eps, phi
constexpr std::size_t kHeaderBytes = 32;
constexpr std::size_t kShortHeaderBytes = 28;

struct Layout {
  bool bigEndian = true;
  std::size_t headerBytes = kHeaderBytes;
  double time = 0.0;
  std::uint64_t nGas = 0, nDark = 0, nStar = 0;
  std::uint64_t total() const { return nGas + nDark + nStar; }
};

std::uint32_t load32(const unsigned char* b, bool big) {
  return big ? (std::uint32_t{b[0]} << 24 | std::uint32_t{b[1]} << 16 | std::uint32_t{b[2]} << 8 |
                std::uint32_t{b[3]})
             : (std::uint32_t{b[3]} << 24 | std::uint32_t{b[2]} << 16 | std::uint32_t{b[1]} << 8 |
                std::uint32_t{b[0]});
}
std::int32_t loadInt(const unsigned char* b, bool big) {
  const std::uint32_t u = load32(b, big);
  std::int32_t v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}
float loadFloat(const unsigned char* b, bool big) {
  const std::uint32_t u = load32(b, big);
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}
double loadDouble(const unsigned char* b, bool big) {
  const std::uint64_t hi = load32(big ? b : b + 4, big), lo = load32(big ? b + 4 : b, big);
  const std::uint64_t u = hi << 32 | lo;
  double v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

void store32(std::vector<unsigned char>& out, std::uint32_t u) {
  out.push_back(static_cast<unsigned char>(u >> 24));
  out.push_back(static_cast<unsigned char>(u >> 16));
  out.push_back(static_cast<unsigned char>(u >> 8));
  out.push_back(static_cast<unsigned char>(u));
}
void storeFloat(std::vector<unsigned char>& out, float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  store32(out, u);
}
void storeInt(std::vector<unsigned char>& out, std::int32_t v) {
  std::uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  store32(out, u);
}

std::uint64_t expectedBytes(const Layout& l) {
  // Counts are below 2^31 each, so this cannot overflow 64 bits.
  return l.headerBytes + 4 * (kGasFloats * l.nGas + kDarkFloats * l.nDark + kStarFloats * l.nStar);
}

struct Candidate {
  Layout layout;
  bool countsConsistent = false;  // ndim 3, counts >= 0 summing to nbodies >= 1
};

// The counts and time of the 32-byte reading; the 28-byte variant has the same fields.
Candidate decode(const unsigned char* h, bool big) {
  Candidate c;
  c.layout.bigEndian = big;
  c.layout.time = loadDouble(h, big);
  const std::int32_t nbodies = loadInt(h + 8, big), ndim = loadInt(h + 12, big);
  const std::int32_t nsph = loadInt(h + 16, big), ndark = loadInt(h + 20, big),
                     nstar = loadInt(h + 24, big);
  if (ndim != 3 || nbodies < 1 || nsph < 0 || ndark < 0 || nstar < 0) return c;
  c.layout.nGas = static_cast<std::uint64_t>(nsph);
  c.layout.nDark = static_cast<std::uint64_t>(ndark);
  c.layout.nStar = static_cast<std::uint64_t>(nstar);
  c.countsConsistent = c.layout.total() == static_cast<std::uint64_t>(nbodies);
  return c;
}

// A record's mass, position and velocity: the first 7 floats of every kind of record.
void loadRecord(const unsigned char* at, bool big, Vec4& posMass, Vec4& vel) {
  posMass = {loadFloat(at + 4, big), loadFloat(at + 8, big), loadFloat(at + 12, big),
             loadFloat(at, big)};
  vel = {loadFloat(at + 16, big), loadFloat(at + 20, big), loadFloat(at + 24, big), 0.0f};
}

// A 32-byte-header file 4 bytes short has exactly the size of the 28-byte variant with the same
// counts. Only the bytes tell them apart: under the 28-byte reading the pad word (0 from every
// writer we know) is the first particle's mass. What that reading's first particle lacks, or
// nullptr when it is a particle (or the probe is too short to judge).
const char* shortHeaderProblem(const unsigned char* h, std::size_t headerSize, bool big) {
  if (headerSize < kHeaderProbeBytes) {
    if (headerSize < kHeaderBytes) return nullptr;
    return loadFloat(h + kShortHeaderBytes, big) > 0.0f ? nullptr : "has mass <= 0";
  }
  Vec4 posMass, vel;
  loadRecord(h + kShortHeaderBytes, big, posMass, vel);
  return valueProblem(posMass, vel);
}

std::string sizeMismatch(const Layout& l, std::uint64_t fileSize, const std::string& name,
                         const std::string& detail) {
  const std::uint64_t expected = expectedBytes(l);
  return "'" + name + "': the Tipsy header (" + (l.bigEndian ? "big" : "little") +
         "-endian) claims " + std::to_string(l.total()) + " particles (" + std::to_string(l.nGas) +
         " gas, " + std::to_string(l.nDark) + " dark, " + std::to_string(l.nStar) + " star) in " +
         std::to_string(expected) + " bytes, but the file has " + std::to_string(fileSize) +
         " bytes (" + (fileSize < expected ? "truncated" : "trailing data") + detail + ")";
}

Layout detect(const unsigned char* header, std::size_t headerSize, std::uint64_t fileSize,
              const std::string& name) {
  if (headerSize < kShortHeaderBytes || fileSize < kShortHeaderBytes) {
    throw SnapshotError("'" + name + "': not a Tipsy or HDF5 snapshot (only " +
                        std::to_string(fileSize) + " bytes)");
  }
  std::optional<Layout> plausible;
  for (const bool big : {true, false}) {
    const Candidate c = decode(header, big);
    if (!c.countsConsistent) continue;
    // The padded variant first: it is the standard one.
    if (expectedBytes(c.layout) == fileSize) return c.layout;
    Layout unpadded = c.layout;
    unpadded.headerBytes = kShortHeaderBytes;
    if (expectedBytes(unpadded) == fileSize) {
      const char* problem = shortHeaderProblem(header, headerSize, big);
      if (problem == nullptr) return unpadded;
      const std::string why = ": not the 28-byte header variant either, whose first particle ";
      throw SnapshotError(sizeMismatch(c.layout, fileSize, name, why + problem));
    }
    if (!plausible) plausible = c.layout;
  }
  if (plausible) throw SnapshotError(sizeMismatch(*plausible, fileSize, name, ""));
  throw SnapshotError("'" + name +
                      "': not a Tipsy or HDF5 snapshot (no byte order gives a Tipsy header with "
                      "ndim 3 and counts that sum to nbodies)");
}

// Where the records are read from and into, through the three sections.
struct Reader {
  const unsigned char* at;
  Particles& p;
  std::size_t i = 0;
};

// Tipsy has no ids: a particle's id is its place in the file, which the message names.
void readSection(Reader& r, const Layout& l, std::uint64_t count, std::size_t floats,
                 std::uint8_t tag, const char* section, const std::string& name) {
  for (std::uint64_t k = 0; k < count; ++k, ++r.i, r.at += 4 * floats) {
    loadRecord(r.at, l.bigEndian, r.p.posMass[r.i], r.p.vel[r.i]);
    if (const char* problem = valueProblem(r.p.posMass[r.i], r.p.vel[r.i])) {
      // Read unpadded, a padded file 4 bytes short would fail here (every record shifted by a
      // word), so the message names both readings.
      const bool unpadded = l.headerBytes == kShortHeaderBytes;
      throw SnapshotError("'" + name + "': particle " + std::to_string(r.i) + " (" + section +
                          " record " + std::to_string(k) + ") " + problem +
                          (unpadded ? " (read with the 28-byte Tipsy header, no pad word; with "
                                      "the 32-byte header the file would be 4 bytes short)"
                                    : ""));
    }
    r.p.accPot[r.i] = {0.0f, 0.0f, 0.0f, 0.0f};
    r.p.id[r.i] = static_cast<std::uint32_t>(r.i);
    r.p.tag[r.i] = tag;
    r.p.bin[r.i] = 0;
  }
}

}  // namespace

std::uint64_t checkHeader(const unsigned char* header, std::size_t headerSize,
                          std::uint64_t fileSize, const std::string& name) {
  return detect(header, headerSize, fileSize, name).total();
}

Snapshot parse(const unsigned char* data, std::size_t size, const std::string& name) {
  const Layout l = detect(data, size, size, name);
  // detect() matched the counts to `size` exactly, so every record below lies inside `data`
  // and the arrays are no larger than the file.
  if (!std::isfinite(l.time)) {
    throw SnapshotError("'" + name + "': the header's time is " + std::to_string(l.time) +
                        ", not a finite number");
  }
  Snapshot s;
  s.time = l.time;
  s.particles.resize(static_cast<std::size_t>(l.total()));
  Reader r{data + l.headerBytes, s.particles};
  readSection(r, l, l.nGas, kGasFloats, makeTag(Component::Disk, 0), "gas", name);
  const Component dark = l.nStar > 0 ? Component::Halo : Component::Sphere;
  readSection(r, l, l.nDark, kDarkFloats, makeTag(dark, 0), "dark", name);
  readSection(r, l, l.nStar, kStarFloats, makeTag(Component::Disk, 0), "star", name);
  try {
    s.particles.validate();
  } catch (const std::invalid_argument& e) {
    throw SnapshotError("'" + name + "': " + e.what());
  }
  // A 32-byte-header file 4 bytes short would have read the same way up to here (unlikely: every
  // record shifted by a word and still sane), so the assumption is said.
  if (l.headerBytes == kShortHeaderBytes) {
    s.notes.push_back("'" + name + "': read with the 28-byte Tipsy header (no pad word)");
  }
  return s;
}

void write(const std::string& path, const Particles& p, double time) {
  if (p.size() > kMaxSnapshotParticles) {
    throw SnapshotError("'" + path + "': " + std::to_string(p.size()) +
                        " particles do not fit in a Tipsy file");
  }
  // Dark first, then stars (Tipsy's order), each by id so that files compare across runs.
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto isStar = [&](std::size_t i) {
    const Component c = tagComponent(p.tag[i]);
    return c == Component::Disk || c == Component::Bulge;
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const bool sa = isStar(a), sb = isStar(b);
    return sa != sb ? sb : p.id[a] < p.id[b];
  });
  const auto nStar = static_cast<std::size_t>(std::count_if(order.begin(), order.end(), isStar));
  const std::size_t nDark = p.size() - nStar;

  std::vector<unsigned char> out;
  out.reserve(kHeaderBytes + 4 * (kDarkFloats * nDark + kStarFloats * nStar));
  std::uint64_t timeBits;
  std::memcpy(&timeBits, &time, sizeof timeBits);
  store32(out, static_cast<std::uint32_t>(timeBits >> 32));
  store32(out, static_cast<std::uint32_t>(timeBits));
  for (const std::size_t v :
       {p.size(), std::size_t{3}, std::size_t{0}, nDark, nStar, std::size_t{0}}) {
    storeInt(out, static_cast<std::int32_t>(v));
  }
  for (const std::size_t i : order) {
    const Vec4& x = p.posMass[i];
    const Vec4& v = p.vel[i];
    for (const float f : {x.w, x.x, x.y, x.z, v.x, v.y, v.z}) storeFloat(out, f);
    if (isStar(i)) {
      storeFloat(out, 0.0f);  // metals
      storeFloat(out, 0.0f);  // tform
    }
    storeFloat(out, 0.0f);  // eps: the softening is a run parameter here, not per particle
    storeFloat(out, p.accPot[i].w);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  f.close();
  if (!f) throw SnapshotError("'" + path + "': writing failed");
}

}  // namespace bhviz::sim::io::tipsy
