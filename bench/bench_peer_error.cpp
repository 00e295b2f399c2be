// A peer's force error measured as bhviz's own: |a − a_direct| / |a_direct| for a random sample
// of its particles against exact Plummer-softened direct summation in double precision (on the
// GPU when there is one), summarised as median, 99th percentile and maximum.
//
// The peer writes its particles' positions (mass in w) and accelerations of one force evaluation
// to a file: int32 n, n float4 positions, n float4 accelerations, in host byte order (Bonsai
// with scripts/peers/build-bonsai.sh's P13: BONSAI_DUMP_FORCES=<file>).
//
//   bench_peer_error --forces FILE [--softening 0.05] [--sample 4000] [--seed 4000]
#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "bench/bench_cli.h"
#include "sim/cuda/cuda_backend.h"
#include "sim/cuda/device_buffer.h"
#include "sim/direct_sum.h"

using namespace bhviz::sim;

namespace {

/// The particles of a force dump, their accelerations in accPot (w: whatever the peer kept
/// there; the error reads x, y, z).
Particles readDump(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::int32_t n = 0;
  in.read(reinterpret_cast<char*>(&n), sizeof n);
  if (!in || n <= 0) throw std::runtime_error(path + ": no particle count");
  in.seekg(0, std::ios::end);
  const auto bytes = static_cast<std::uint64_t>(in.tellg());
  if (bytes != sizeof n + 2 * std::uint64_t(n) * sizeof(Vec4)) {
    throw std::runtime_error(path + ": " + std::to_string(bytes) + " bytes, not those of " +
                             std::to_string(n) + " particles");
  }
  in.seekg(sizeof n);
  Particles p;
  p.resize(std::size_t(n));
  in.read(reinterpret_cast<char*>(p.posMass.data()), std::streamsize(n) * sizeof(Vec4));
  in.read(reinterpret_cast<char*>(p.accPot.data()), std::streamsize(n) * sizeof(Vec4));
  if (!in) throw std::runtime_error(path + ": truncated");
  for (std::size_t i = 0; i < p.size(); ++i) p.id[i] = std::uint32_t(i);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"a peer's force error against exact direct summation"};
  std::string path;
  double softening = 0.05;
  std::size_t sample = 4000;
  std::uint64_t seed = 4000;
  app.add_option("--forces", path, "the peer's dump (int32 n, float4 pos[n], float4 acc[n])")
      ->required();
  app.add_option("--softening", softening, "Plummer ε of the peer's run");
  app.add_option("--sample", sample, "particles compared");
  app.add_option("--seed", seed, "of the sample");
  if (const auto status = bhviz::bench::parseOrExit(app, argc, argv)) return *status;
  try {
    const Particles p = readDump(path);
    double mass = 0.0;
    for (const Vec4& x : p.posMass) mass += x.w;
    const std::vector<std::uint32_t> targets = sampleIndices(p.size(), sample, seed);
    const std::vector<Accel4d> ref = cuda::deviceCount() > 0
                                         ? cuda::directSumDevice(p, targets, softening)
                                         : directSum(p, targets, softening);
    const ForceError e = forceError(p, targets, ref);
    std::printf(
        "%s: n %zu, total mass %.6f, %zu sampled, eps %.4g: error median %.3e p99 %.3e "
        "max %.3e\n",
        path.c_str(), p.size(), mass, targets.size(), softening, e.median, e.p99, e.max);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_peer_error: " << e.what() << '\n';
    return 1;
  }
}
