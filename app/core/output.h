#pragma once
// What a headless run leaves behind: the statistics as JSON and the accelerations as CSV.
// Both are written to FILE.tmp and renamed, so a reader never sees half a file and an
// interrupted run never clobbers an earlier result.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/backend.h"
#include "sim/diagnostics.h"
#include "sim/params.h"
#include "sim/particles.h"
#include "sim/profile.h"
#include "sim/rebuild_tuner.h"

namespace bhviz::app {

/// Everything measured in one run, as the stats file reports it.
struct RunReport {
  std::string scenario;
  std::size_t n = 0;  ///< particles [1]
  std::uint64_t seed = 0;
  std::string backend;  ///< the backend's own name
  int threads = 0;      ///< OpenMP threads used [1]
  sim::SimParams params;
  int steps = 0;               ///< dtMax intervals completed [1]
  std::uint64_t substeps = 0;  ///< force evaluations in those steps [1]
  double time = 0.0;           ///< simulation time at the end [time]
  sim::StepProfile profile;    ///< stage ms and interactions summed over the steps
  double wallMs = 0.0;         ///< wall-clock time of the steps [ms]
  sim::Diagnostics start;      ///< after the initial force evaluation
  sim::Diagnostics end;        ///< after the last completed step (or the abort)
  bool aborted = false;        ///< the run stopped on a non-finite state
  std::string abortReason;
  std::vector<std::uint32_t> nonFiniteIds;
  std::vector<sim::RankReport> ranks;  ///< one per rank under mpirun; empty for one process
  sim::TreeStatistics tree;  ///< of the last force evaluation (every rank's summed under mpirun)
  sim::RebuildTunerState rebuild;  ///< the tree's rebuilds and refits, and the tuner's last fit
};

/// The stats document, keys in a fixed order (listed where output.cpp builds it).
nlohmann::ordered_json statsJson(const RunReport& r);

/// FILE.tmp, beside FILE: the rename that finishes an atomic write stays on one file system.
std::filesystem::path temporaryPathFor(const std::filesystem::path& path);

/// Calls `write` on a stream to FILE.tmp, then renames it to FILE. Throws std::runtime_error
/// naming the file when anything fails (and leaves no temporary behind).
void writeFileAtomically(const std::filesystem::path& path,
                         const std::function<void(std::ostream&)>& write);

void writeStats(const std::filesystem::path& path, const RunReport& r);

/// Header `id,mass,x,y,z,vx,vy,vz,ax,ay,az,pot`, then one line per particle sorted by id,
/// floats with 9 significant digits so they read back bit for bit.
void writeAccelCsv(std::ostream& out, const sim::Particles& p);
void writeAccelCsv(const std::filesystem::path& path, const sim::Particles& p);

}  // namespace bhviz::app
