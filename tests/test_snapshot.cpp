// Snapshots (sim/io/snapshot.h): round trips of both formats and both Tipsy byte orders, and
// files that lie (truncated, corrupt, hostile counts) giving one clear SnapshotError; then the
// executable's --save / --load.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "process_support.h"
#include "sim/backend.h"
#include "sim/ic/initial_conditions.h"
#include "sim/io/snapshot.h"
#include "sim/simulation.h"

namespace {

namespace fs = std::filesystem;
namespace io = bhviz::sim::io;
using bhviz::sim::Component;
using bhviz::sim::Particles;
using bhviz::test::TempDir;

std::vector<unsigned char> bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
void put(const fs::path& p, const std::vector<unsigned char>& b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}
std::string errorOf(const std::string& path) {
  try {
    io::readSnapshot(path);
  } catch (const io::SnapshotError& e) {
    return e.what();
  }
  return "";
}
void expectOneLineNaming(const std::string& message, const std::string& path, const char* word) {
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find(word), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}
bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The standard Tipsy bytes of `p`, written through writeSnapshot.
std::vector<unsigned char> tipsyBytes(const fs::path& dir, const Particles& p) {
  const fs::path path = dir / "bytes.tipsy";
  io::writeSnapshot(path.string(), p, 0.25);
  return bytes(path);
}

// The particle with id `id` in p.
std::size_t byId(const Particles& p, std::uint32_t id) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p.id[i] == id) return i;
  }
  return p.size();
}

Particles merger() { return bhviz::sim::makeScenario("merger", 600, 3); }

// Tipsy renumbers by file order; the particles themselves (matched by position) must be equal.
void expectSameParticlesByPosition(const Particles& a, const Particles& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    bool found = false;
    for (std::size_t j = 0; j < b.size() && !found; ++j) {
      found = std::memcmp(&a.posMass[i], &b.posMass[j], sizeof a.posMass[i]) == 0 &&
              std::memcmp(&a.vel[i], &b.vel[j], 3 * sizeof(float)) == 0;
    }
    ASSERT_TRUE(found) << "particle " << a.id[i] << " did not survive";
  }
}

TEST(Tipsy, RoundTripStandard) {
  TempDir dir;
  const Particles p = merger();
  const std::string path = (dir.path / "m.tipsy").string();
  io::writeSnapshot(path, p, 1.25);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  const io::Snapshot s = io::readSnapshotWithTime(path);
  EXPECT_EQ(s.time, 1.25);
  expectSameParticlesByPosition(p, s.particles);
  // Stars (disk, bulge) read back as disk, dark as halo; the galaxy index is lost.
  std::size_t stars = 0;
  for (std::uint8_t t : p.tag) stars += bhviz::sim::tagComponent(t) != Component::Halo;
  std::size_t disks = 0;
  for (std::uint8_t t : s.particles.tag) disks += bhviz::sim::tagComponent(t) == Component::Disk;
  EXPECT_EQ(disks, stars);
}

// A native (little-endian) file: the standard one with every 4- and 8-byte field swapped.
TEST(Tipsy, ReadsNativeLittleEndian) {
  TempDir dir;
  const Particles p = bhviz::sim::makeScenario("plummer", 300, 5);
  const fs::path big = dir.path / "p.tipsy", little = dir.path / "p_native.bin";
  io::writeSnapshot(big.string(), p, 0.5);
  std::vector<unsigned char> b = bytes(big);
  std::reverse(b.begin(), b.begin() + 8);
  for (std::size_t at = 8; at + 4 <= b.size(); at += 4)
    std::reverse(b.begin() + at, b.begin() + at + 4);
  put(little, b);
  const io::Snapshot s = io::readSnapshotWithTime(little.string());
  EXPECT_EQ(s.time, 0.5);
  expectSameParticlesByPosition(p, s.particles);
  // Only dark particles: a sphere, not a (hidden) halo.
  for (std::uint8_t t : s.particles.tag) EXPECT_EQ(bhviz::sim::tagComponent(t), Component::Sphere);
}

TEST(Tipsy, TruncatedFileIsRefused) {
  TempDir dir;
  const fs::path path = dir.path / "t.tipsy";
  io::writeSnapshot(path.string(), merger(), 0.0);
  std::vector<unsigned char> b = bytes(path);
  b.resize(b.size() - 10);
  put(path, b);
  expectOneLineNaming(errorOf(path.string()), path.string(), "truncated");
}

// Issue D8: 4 bytes short, a standard file has the size of the 28-byte header variant with the
// same counts; read that way its first particle's mass is the pad word (0). It must say
// truncated, like every other truncation, in either byte order and from memory too.
TEST(Tipsy, FourBytesShortIsTruncatedNotTheUnpaddedVariant) {
  TempDir dir;
  std::vector<unsigned char> b = tipsyBytes(dir.path, merger());
  b.resize(b.size() - 4);
  const fs::path path = dir.path / "short4.tipsy";
  put(path, b);
  expectOneLineNaming(errorOf(path.string()), path.string(), "(truncated");
  try {
    io::tipsy::parse(b.data(), b.size(), "mem.tipsy");
    ADD_FAILURE() << "a file 4 bytes short was accepted";
  } catch (const io::SnapshotError& e) {
    expectOneLineNaming(e.what(), "mem.tipsy", "(truncated");
  }
  // Native byte order: the same file with every 4- and 8-byte field swapped.
  std::reverse(b.begin(), b.begin() + 8);
  for (std::size_t at = 8; at + 4 <= b.size(); at += 4)
    std::reverse(b.begin() + at, b.begin() + at + 4);
  put(path, b);
  expectOneLineNaming(errorOf(path.string()), path.string(), "(truncated");
}

// A real 28-byte-header file (the pad left out) still reads, and says which header it assumed.
TEST(Tipsy, UnpaddedHeaderReadsWithANote) {
  TempDir dir;
  const Particles p = merger();
  std::vector<unsigned char> b = tipsyBytes(dir.path, p);
  b.erase(b.begin() + 28, b.begin() + 32);
  const fs::path path = dir.path / "unpadded.tipsy";
  put(path, b);
  const io::Snapshot s = io::readSnapshotWithTime(path.string());
  EXPECT_EQ(s.time, 0.25);
  expectSameParticlesByPosition(p, s.particles);
  ASSERT_EQ(s.notes.size(), 1u);
  expectOneLineNaming(s.notes[0], path.string(), "28-byte Tipsy header");
  // The padded file has no note.
  EXPECT_TRUE(io::readSnapshotWithTime((dir.path / "bytes.tipsy").string()).notes.empty());
}

// When both readings are plausible (a writer that left garbage in the pad, then 4 bytes lost),
// the unpadded one is assumed, and a message about a particle says so and names the other.
TEST(Tipsy, AmbiguousHeaderSaysWhichWasAssumed) {
  TempDir dir;
  std::vector<unsigned char> b = tipsyBytes(dir.path, bhviz::sim::makeScenario("plummer", 50, 4));
  b[28] = 0x3f;  // pad = 1.0f (big-endian), so the unpadded reading's first particle is sane
  b[29] = 0x80;
  b.resize(b.size() - 4);
  const fs::path path = dir.path / "ambiguous.tipsy";
  put(path, b);
  const std::string e = errorOf(path.string());
  expectOneLineNaming(e, path.string(), "28-byte Tipsy header");
  EXPECT_TRUE(contains(e, "4 bytes short")) << e;
}

TEST(Tipsy, CorruptHeaderIsRefused) {
  TempDir dir;
  const fs::path path = dir.path / "c.tipsy";
  io::writeSnapshot(path.string(), merger(), 0.0);
  std::vector<unsigned char> b = bytes(path);
  b[15] = 7;  // ndim (big-endian int at 12..15) = 7
  put(path, b);
  expectOneLineNaming(errorOf(path.string()), path.string(), "not a Tipsy or HDF5 snapshot");
}

TEST(Tipsy, HeaderClaimingMoreParticlesThanTheFileHolds) {
  TempDir dir;
  const fs::path path = dir.path / "more.tipsy";
  io::writeSnapshot(path.string(), bhviz::sim::makeScenario("plummer", 10, 1), 0.0);
  std::vector<unsigned char> b = bytes(path);
  b[11] = 11;  // nbodies
  b[23] = 11;  // ndark
  put(path, b);
  expectOneLineNaming(errorOf(path.string()), path.string(), "claims 11 particles");
}

TEST(Tipsy, HostileCountsAllocateNothing) {
  TempDir dir;
  const fs::path path = dir.path / "hostile.tipsy";
  // nbodies = ndark = 2^31 - 1 in a 32-byte file: refused from the header alone.
  std::vector<unsigned char> b(32, 0);
  const unsigned char maxInt[4] = {0x7f, 0xff, 0xff, 0xff};
  std::memcpy(&b[8], maxInt, 4);
  b[15] = 3;
  std::memcpy(&b[20], maxInt, 4);
  put(path, b);
  expectOneLineNaming(errorOf(path.string()), path.string(), "claims 2147483647 particles");
  // The in-memory parser (the fuzz target's entry) says the same.
  EXPECT_THROW(io::tipsy::parse(b.data(), b.size(), "mem"), io::SnapshotError);
}

TEST(Snapshot, UnknownFormatAndExtension) {
  TempDir dir;
  const fs::path path = dir.path / "text.tipsy";
  std::ofstream(path) << "this is not a snapshot, just some text that is long enough\n";
  expectOneLineNaming(errorOf(path.string()), path.string(), "not a Tipsy or HDF5 snapshot");
  const fs::path empty = dir.path / "empty";
  std::ofstream(empty).flush();
  expectOneLineNaming(errorOf(empty.string()), empty.string(), "not a Tipsy or HDF5 snapshot");
  expectOneLineNaming(errorOf((dir.path / "missing").string()), "missing", "no such file");
  EXPECT_THROW(io::writeSnapshot((dir.path / "x.csv").string(), merger(), 0.0), io::SnapshotError);
  EXPECT_FALSE(fs::exists(dir.path / "x.csv.tmp"));
}

TEST(Snapshot, FailedWriteLeavesNoTemporary) {
  TempDir dir;
  const fs::path path = dir.path / "no_such_dir" / "a.tipsy";
  EXPECT_THROW(io::writeSnapshot(path.string(), merger(), 0.0), io::SnapshotError);
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
}

TEST(Hdf5, RoundTripKeepsIdsAndTags) {
  if (!io::haveHdf5()) GTEST_SKIP() << "built without HDF5";
  TempDir dir;
  const Particles p = merger();
  const std::string path = (dir.path / "m.hdf5").string();
  io::writeSnapshot(path, p, 2.5);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  const io::Snapshot s = io::readSnapshotWithTime(path);
  EXPECT_EQ(s.time, 2.5);
  ASSERT_EQ(s.particles.size(), p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    const std::size_t j = byId(s.particles, p.id[i]);
    ASSERT_LT(j, p.size());
    EXPECT_EQ(std::memcmp(&p.posMass[i], &s.particles.posMass[j], sizeof p.posMass[i]), 0);
    EXPECT_EQ(std::memcmp(&p.vel[i], &s.particles.vel[j], 3 * sizeof(float)), 0);
    EXPECT_EQ(p.tag[i], s.particles.tag[j]);
  }
}

// Plummer particles with the ids a file of another code might have: 1000, 1001, ...
Particles withIdsFrom1000() {
  Particles p = bhviz::sim::makeScenario("plummer", 300, 6);
  for (std::size_t i = 0; i < p.size(); ++i) p.id[i] = static_cast<std::uint32_t>(1000 + i);
  return p;
}

// Issue D9: a message about a particle names it as the file does (its ParticleID), not by its
// place in the file nor by the id it would have had after renumbering.
TEST(Hdf5, MessagesNameTheFilesParticleId) {
  if (!io::haveHdf5()) GTEST_SKIP() << "built without HDF5";
  TempDir dir;
  Particles p = withIdsFrom1000();
  p.posMass[byId(p, 1017)].x = NAN;
  const std::string path = (dir.path / "nan.hdf5").string();
  io::writeSnapshot(path, p, 0.0);
  const std::string e = errorOf(path);
  expectOneLineNaming(e, path, "ParticleID 1017 ");
  EXPECT_TRUE(contains(e, "non-finite")) << e;
  EXPECT_FALSE(contains(e, "particle 17 ")) << e;
  // Mass <= 0 alike.
  p = withIdsFrom1000();
  p.posMass[byId(p, 1042)].w = 0.0f;
  io::writeSnapshot(path, p, 0.0);
  expectOneLineNaming(errorOf(path), path, "ParticleID 1042 ");
}

// Issue 17 (a): ids are ranked to 0..N-1 in their order, silently when they are unique; when
// some repeat, the particles keep the file order and the snapshot carries one note saying so
// (through the child process that reads HDF5, too).
TEST(Hdf5, RepeatedParticleIdsAreRenumberedWithANote) {
  if (!io::haveHdf5()) GTEST_SKIP() << "built without HDF5";
  TempDir dir;
  Particles p = withIdsFrom1000();
  const std::string path = (dir.path / "ids.hdf5").string();
  io::writeSnapshot(path, p, 0.0);
  io::Snapshot s = io::readSnapshotWithTime(path);
  EXPECT_TRUE(s.notes.empty());
  EXPECT_EQ(s.particles.posMass[byId(s.particles, 17)].x, p.posMass[byId(p, 1017)].x);

  p.id[byId(p, 1010)] = 1005;
  p.id[byId(p, 1020)] = 1005;
  p.id[byId(p, 1030)] = 1007;
  io::writeSnapshot(path, p, 0.0);
  s = io::readSnapshotWithTime(path);
  ASSERT_EQ(s.particles.size(), p.size());
  for (std::size_t i = 0; i < s.particles.size(); ++i) ASSERT_EQ(s.particles.id[i], i);
  ASSERT_EQ(s.notes.size(), 1u);
  expectOneLineNaming(s.notes[0], path, "2 ParticleIDs appear more than once (the smallest: 1005)");
  EXPECT_TRUE(contains(s.notes[0], "file order")) << s.notes[0];
  // The run says so: one note line on stderr, and it goes on.
  const auto r = bhviz::test::runBhviz("--headless --backend cpu --threads 1 --quiet --load " +
                                       path + " --steps 1");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "bhviz: note: ") && contains(r.err, "more than once")) << r.err;
}

TEST(Hdf5, TruncatedAndCorruptFilesAreRefused) {
  if (!io::haveHdf5()) GTEST_SKIP() << "built without HDF5";
  TempDir dir;
  const fs::path path = dir.path / "m.hdf5";
  io::writeSnapshot(path.string(), merger(), 0.0);
  const std::vector<unsigned char> good = bytes(path);
  std::vector<unsigned char> b(good.begin(), good.begin() + static_cast<long>(good.size() / 2));
  put(path, b);
  expectOneLineNaming(errorOf(path.string()), path.string(), "HDF5");
  // Garbage after the signature.
  b.assign(good.begin(), good.end());
  for (std::size_t i = 8; i < 200 && i < b.size(); ++i) b[i] = static_cast<unsigned char>(i * 37);
  put(path, b);
  EXPECT_NE(errorOf(path.string()), "");
}

// The in-memory reader the HDF5 fuzzer drives is the file reader: same particles, same time.
TEST(Hdf5, ParseFromMemoryMatchesTheFileReader) {
  if (!io::haveHdf5()) GTEST_SKIP() << "built without HDF5";
  TempDir dir;
  const std::string path = (dir.path / "m.hdf5").string();
  io::writeSnapshot(path, merger(), 3.5);
  const std::vector<unsigned char> b = bytes(path);
  const io::Snapshot fromFile = io::readSnapshotWithTime(path);
  const io::Snapshot fromMemory = io::hdf5::parse(b.data(), b.size(), "mem.hdf5");
  EXPECT_EQ(fromMemory.time, 3.5);
  ASSERT_EQ(fromMemory.particles.size(), fromFile.particles.size());
  for (std::size_t i = 0; i < fromFile.particles.size(); ++i) {
    EXPECT_EQ(std::memcmp(&fromFile.particles.posMass[i], &fromMemory.particles.posMass[i],
                          sizeof fromFile.particles.posMass[i]),
              0);
    EXPECT_EQ(fromFile.particles.id[i], fromMemory.particles.id[i]);
    EXPECT_EQ(fromFile.particles.tag[i], fromMemory.particles.tag[i]);
  }
  // Half an image: one error naming the buffer, not a crash.
  try {
    io::hdf5::parse(b.data(), b.size() / 2, "half.hdf5");
    ADD_FAILURE() << "half an HDF5 image was accepted";
  } catch (const io::SnapshotError& e) {
    expectOneLineNaming(e.what(), "half.hdf5", "HDF5");
  }
}

#ifdef BHVIZ_TEST_DATA
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// What sim/io/isolated.h promises for a file libhdf5 mishandles, however the child ends (the
// library's error, a failed allocation, or the child killed: under ASan the library's own
// over-reads and huge requests kill it): one SnapshotError, one line, naming the file, and this
// process goes on. A plain build also pins the library's own error, naming `word`: there the
// child lives to report it.
void expectRefusedInOneLine(const std::string& path, const char* word) {
  const std::string e = errorOf(path);
  expectOneLineNaming(e, path, kSanitized ? "'" : word);
  const std::vector<unsigned char> b = bytes(path);
  try {
    io::hdf5::parse(b.data(), b.size(), "mem.hdf5");
    ADD_FAILURE() << path << " was accepted from memory";
  } catch (const io::SnapshotError& m) {
    expectOneLineNaming(m.what(), "'mem.hdf5'", kSanitized ? "'" : word);
  }
}

// Found by fuzz_hdf5 (scripts/fuzz.sh): a corrupt object header makes libhdf5 ask for 256 GiB of
// metadata cache (H5C_protect). The allocation fails and libhdf5 reports an error; the reader
// turns that into one SnapshotError, from a file and from memory, without allocating anything
// near that.
TEST(Hdf5, FuzzReproducerHugeMetadataIsRefused) {
  if (!io::haveHdf5()) GTEST_SKIP() << "built without HDF5";
  const std::string path = std::string(BHVIZ_TEST_DATA) + "/fuzz/hdf5-huge-metadata.hdf5";
  ASSERT_TRUE(fs::exists(path)) << path;
  expectRefusedInOneLine(path, "Header");
}

// Found by fuzz_hdf5: a corrupt attribute message that libhdf5 1.10.8 reads 8 bytes past (inside
// the library, H5O__msg_iterate_real under H5Aexists; suppressed in tests/fuzz/asan.supp). It
// ends in one SnapshotError, not a crash: naming the attribute in a plain build.
TEST(Hdf5, FuzzReproducerCorruptAttributeIsRefused) {
  if (!io::haveHdf5()) GTEST_SKIP() << "built without HDF5";
  const std::string path = std::string(BHVIZ_TEST_DATA) + "/fuzz/hdf5-attribute-overread.hdf5";
  ASSERT_TRUE(fs::exists(path)) << path;
  expectRefusedInOneLine(path, "Header/");
}

// Found by fuzz_hdf5 in CI: a file on which libhdf5 1.10.8 itself dies (a null memcpy inside
// H5F__accum_read, while looking up the Header group). The library runs in a child process
// (sim/io/isolated.h), so bhviz says so in one line and goes on; the same for the in-memory path.
TEST(Hdf5, FuzzReproducerThatCrashesTheLibraryIsOneLine) {
  if (!io::haveHdf5()) GTEST_SKIP() << "built without HDF5";
  const std::string path = std::string(BHVIZ_TEST_DATA) + "/fuzz/hdf5-accum-read-segv.hdf5";
  ASSERT_TRUE(fs::exists(path)) << path;
  const std::string e = errorOf(path);
  expectOneLineNaming(e, path, "crashed the reader");
  const std::vector<unsigned char> b = bytes(path);
  EXPECT_THROW(io::hdf5::parse(b.data(), b.size(), "mem.hdf5"), io::SnapshotError);
  // A header that makes libhdf5 ask for 4 GB (found by fuzz_hdf5 in CI): the child's memory
  // is bounded by the file's size, so the allocation fails there and bhviz says so.
  const std::string huge = std::string(BHVIZ_TEST_DATA) + "/fuzz/hdf5-huge-object-header.hdf5";
  ASSERT_TRUE(fs::exists(huge)) << huge;
  expectOneLineNaming(errorOf(huge), huge, "'");
  // Another of that kind, found by CI's fuzz_hdf5 on 2026-11-21 (the allocation while opening a
  // group's object header, H5O_protect).
  const std::string huge2 = std::string(BHVIZ_TEST_DATA) + "/fuzz/hdf5-huge-object-header-2.hdf5";
  ASSERT_TRUE(fs::exists(huge2)) << huge2;
  expectOneLineNaming(errorOf(huge2), huge2, "'");
  // Two more found by fuzz.sh on 2026-11-24: an integer division by zero inside libhdf5
  // (H5D__chunk_set_info under H5Dopen2) and a 4 GB request while reading the superblock. The
  // child dies or fails; bhviz says so in one line.
  // And one found on 2026-11-26 that holds ~2 GB before asking for 16 GiB (H5C_protect).
  for (const char* name : {"hdf5-chunk-divide-by-zero.hdf5", "hdf5-huge-superblock.hdf5",
                           "hdf5-cache-protect-oom.hdf5"}) {
    const std::string found = std::string(BHVIZ_TEST_DATA) + "/fuzz/" + name;
    ASSERT_TRUE(fs::exists(found)) << found;
    expectOneLineNaming(errorOf(found), found, "'");
  }
  // And a good file still reads through the child, every array intact.
  TempDir dir;
  const std::string good = (dir.path / "good.hdf5").string();
  const bhviz::sim::Particles p = bhviz::sim::makeScenario("plummer", 777, 3);
  io::writeSnapshot(good, p, 0.5);
  const io::Snapshot back = io::readSnapshotWithTime(good);
  EXPECT_EQ(back.time, 0.5);
  ASSERT_EQ(back.particles.size(), p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    ASSERT_EQ(back.particles.posMass[i].x, p.posMass[i].x);
    ASSERT_EQ(back.particles.vel[i].z, p.vel[i].z);
    ASSERT_EQ(back.particles.id[i], p.id[i]);
    ASSERT_EQ(back.particles.tag[i], p.tag[i]);
  }
}
#endif

// --load starts the run at the file's time: a Tipsy file at t = 1.25, one step of dtMax 0.125,
// saved again, says t = 1.375.
TEST(SnapshotCli, LoadStartsAtTheFilesTime) {
  TempDir dir;
  const std::string a = (dir.path / "a.tipsy").string(), b = (dir.path / "b.tipsy").string();
  io::writeSnapshot(a, bhviz::sim::makeScenario("plummer", 200, 2), 1.25);
  const auto r = bhviz::test::runBhviz("--headless --quiet --backend cpu --load " + a +
                                       " --shared-dt 0.125 --steps 1 --save " + b);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_DOUBLE_EQ(io::readSnapshotWithTime(b).time, 1.375);
}

// --save then --load through the executable: the loaded run starts from the saved positions.
TEST(SnapshotCli, SaveThenLoadReproducesPositions) {
  TempDir dir;
  const std::string a = (dir.path / "a.hdf5").string(), b = (dir.path / "b.tipsy").string();
  const std::string ext = io::haveHdf5() ? a : (dir.path / "a.tipsy").string();
  auto r = bhviz::test::runBhviz(
      "--headless --quiet --backend cpu --scenario galaxy --n 500 "
      "--steps 2 --save " +
      ext + " --save-every 1 " + (dir.path / "every").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.path / "every" / "snapshot_000002.tipsy"));
  r = bhviz::test::runBhviz("--headless --quiet --backend cpu --load " + ext +
                            " --steps 0 --save " + b);
  ASSERT_EQ(r.status, 0) << r.err;
  expectSameParticlesByPosition(io::readSnapshot(ext), io::readSnapshot(b));
  // The numbered snapshot of the last step is the same state as --save's.
  expectSameParticlesByPosition(
      io::readSnapshot(ext),
      io::readSnapshot((dir.path / "every" / "snapshot_000002.tipsy").string()));
}

// Issue 17 (b): a snapshot's time so large that a double cannot resolve the smallest step
// (t = 1e300: t + dt == t, the clock stood still) is refused when the simulation is made,
// naming the time and the step; the command line says so in one line, exit status 2 (main's
// answer to InvalidParameter). Times that resolve the step still start the run.
TEST(SnapshotCli, StartTimeThatCannotAdvanceIsRefused) {
  using bhviz::sim::Simulation;
  const Particles p = bhviz::sim::makeScenario("plummer", 100, 2);
  bhviz::sim::SimParams params;  // shared steps of 1/128
  try {
    Simulation(bhviz::sim::makeCpuBackend(), p, params, 1e300);
    ADD_FAILURE() << "t = 1e300 was accepted";
  } catch (const bhviz::sim::InvalidParameter& e) {
    EXPECT_TRUE(contains(e.what(), "1e+300") && contains(e.what(), "0.0078125")) << e.what();
  }
  EXPECT_THROW(Simulation(bhviz::sim::makeCpuBackend(), p, params, -1e15),
               bhviz::sim::InvalidParameter);
  Simulation fine(bhviz::sim::makeCpuBackend(), p, params, 1e9);
  fine.advance(1);
  EXPECT_GT(fine.time(), 1e9);
  // Block steps 16 bins deep: the smallest step 1/128 / 2^16 is too fine for t = 1e9.
  params.stepping = bhviz::sim::TimeStepping::Block;
  params.maxBinDepth = 16;
  EXPECT_THROW(fine.setParams(params), bhviz::sim::InvalidParameter);
  EXPECT_THROW(Simulation(bhviz::sim::makeCpuBackend(), p, params, 1e9),
               bhviz::sim::InvalidParameter);

  TempDir dir;
  const std::string path = (dir.path / "late.tipsy").string();
  io::writeSnapshot(path, p, 1e300);
  const auto r =
      bhviz::test::runBhviz("--headless --backend cpu --threads 1 --load " + path + " --steps 1");
  // A snapshot bhviz cannot run: exit status 1, one line naming the file, its time and the step.
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "1e+300")) << r.err;
  EXPECT_TRUE(contains(r.err, path)) << r.err;
}

// Issue 17 (c), accepted: particles at one point with softening 0. A source at a target's exact
// position exerts no force (that is how P2P drops the self-interaction), so coincident particles
// start with no force and no potential at all; once apart they meet unsoftened 1/r^2 forces and
// energy is not conserved (README, "Snapshots": use softening > 0). The run is refused nowhere
// and stays finite.
TEST(SnapshotCli, CoincidentParticlesWithoutSofteningAreAccepted) {
  Particles p = bhviz::sim::makeScenario("plummer", 100, 2);
  for (auto& x : p.posMass) x.x = x.y = x.z = 0.5f;
  TempDir dir;
  const std::string path = (dir.path / "one_point.tipsy").string();
  io::writeSnapshot(path, p, 0.0);
  bhviz::sim::SimParams params;
  params.softening = 0.0f;
  bhviz::sim::Simulation sim(bhviz::sim::makeCpuBackend(), io::readSnapshot(path), params);
  for (const auto& a : sim.particles().accPot) {
    ASSERT_EQ(a.x, 0.0f);
    ASSERT_EQ(a.y, 0.0f);
    ASSERT_EQ(a.z, 0.0f);
    ASSERT_EQ(a.w, 0.0f);
  }
  sim.advance(1);
  for (const auto& x : sim.particles().posMass)
    ASSERT_TRUE(std::isfinite(x.x) && std::isfinite(x.y));
  const auto r = bhviz::test::runBhviz(
      "--headless --quiet --backend cpu --threads 1 --softening 0 --load " + path + " --steps 1");
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(SnapshotCli, BadLoadPathIsAUsageError) {
  TempDir dir;
  const auto r = bhviz::test::runBhviz("--headless --load " + (dir.path / "nope.tipsy").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("--load"), std::string::npos) << r.err;
}

TEST(SnapshotCli, CorruptLoadExitsOneWithOneLine) {
  TempDir dir;
  const fs::path path = dir.path / "bad.tipsy";
  std::ofstream(path) << "definitely not a snapshot of anything at all\n";
  const auto r = bhviz::test::runBhviz("--headless --load " + path.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
