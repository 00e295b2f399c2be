// Writes the fuzzers' seed corpus: small valid snapshots from our own writers, so the fuzzers
// start from inputs that reach the end of the readers. make_fuzz_seeds DIR writes DIR/tipsy/*
// and DIR/hdf5/*.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/ic/initial_conditions.h"
#include "sim/io/snapshot.h"

namespace fs = std::filesystem;
namespace io = bhviz::sim::io;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_fuzz_seeds DIR\n";
    return 2;
  }
  const fs::path dir = argv[1];
  fs::create_directories(dir / "tipsy");
  fs::create_directories(dir / "hdf5");
  try {
    // Dark only, stars and dark, and one particle: each Tipsy section is reached.
    io::writeSnapshot((dir / "tipsy" / "plummer8.tipsy").string(),
                      bhviz::sim::makeScenario("plummer", 8, 1), 0.5);
    io::writeSnapshot((dir / "tipsy" / "merger12.tipsy").string(),
                      bhviz::sim::makeScenario("merger", 12, 2), 1.0);
    io::writeSnapshot((dir / "tipsy" / "one.tipsy").string(),
                      bhviz::sim::makeScenario("plummer", 1, 3), 0.0);
    // The native (little-endian) byte order of the same plummer file.
    std::ifstream in(dir / "tipsy" / "plummer8.tipsy", std::ios::binary);
    std::vector<char> b{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::reverse(b.begin(), b.begin() + 8);
    for (std::size_t at = 8; at + 4 <= b.size(); at += 4)
      std::reverse(b.begin() + at, b.begin() + at + 4);
    std::ofstream(dir / "tipsy" / "plummer8_native.bin", std::ios::binary)
        .write(b.data(), static_cast<std::streamsize>(b.size()));
    if (io::haveHdf5()) {
      io::writeSnapshot((dir / "hdf5" / "merger12.hdf5").string(),
                        bhviz::sim::makeScenario("merger", 12, 2), 1.0);
      io::writeSnapshot((dir / "hdf5" / "plummer4.hdf5").string(),
                        bhviz::sim::makeScenario("plummer", 4, 1), 0.0);
    }
  } catch (const std::exception& e) {
    std::cerr << "make_fuzz_seeds: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
