#pragma once
// The settings of a run that more than one part of the app shares, with no behaviour: what a
// simulation is built from, how far a frame moves it, the accuracy meter's and the sweeps'
// knobs. Light on purpose (the standard library and sim/params.h), so that the command line,
// the session and the window state include it without pulling in each other.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/params.h"

namespace bhviz::app {

/// --backend: the CPU, CUDA, or CUDA where it can run (app/backend_select.h).
enum class BackendChoice { Cpu, Cuda, Auto };

/// The largest N accepted: ids are 32-bit, and no host holds much more than this anyway.
inline constexpr std::size_t kMaxParticles = 1'000'000'000;

/// What a simulation is built from: changing any of these rebuilds it.
struct SceneSettings {
  std::string scenario = "merger";  ///< a name from sim::scenarios(), or a scenario file's path
  std::size_t n = 20000;            ///< particles [1]
  std::uint64_t seed = 1;           ///< initial-condition seed
  BackendChoice backend = BackendChoice::Auto;  ///< cpu, cuda or auto
  std::string snapshotPath;  ///< built from this snapshot (its N and time) instead of the scenario;
                             ///< empty = the scenario
  /// Under mpirun: decompose again when the work's imbalance or growth passes it (0: every full
  /// step; < 0: the distributed backend's default).
  double rebalance = -1.0;
};

/// How far the simulation moves per displayed frame.
struct FrameBudget {
  enum class Mode { SimTime, Substeps };
  Mode mode = Mode::SimTime;
  float simTimePerFrame = 1.0f / 64.0f;  ///< [time]; SimTime mode
  int substepsPerFrame = 1;              ///< Substeps mode [1]
  float maxWallMs = 60.0f;  ///< stop substepping once a frame has spent this long on it [ms]
};

/// The meter's knobs (the Accuracy meter panel edits them).
struct MeterSettings {
  bool enabled = true;
  int everyFrames = 30;      ///< frames between the starts of two measurements [1]
  int sample = 2000;         ///< particles compared with direct summation [1]
  bool autoInterval = true;  ///< stretch everyFrames so measuring costs ≤ kMeterShare of the frames
};

/// What the sweep section of the Accuracy meter panel edits.
struct SweepSettings {
  float from = 0.3f;                                 ///< first θ [1]
  float to = 0.9f;                                   ///< last θ [1]
  float step = 0.1f;                                 ///< [1]
  std::array<bool, 4> macs{true, true, true, true};  ///< per sim::MacKind, in enum order
  std::string csvPath = "sweep.csv";                 ///< Export CSV writes here
};

/// --sweep theta=FROM:TO:STEP with --mac NAME|all and --out FILE.csv.
struct SweepOptions {
  bool wanted = false;             ///< --sweep was given
  std::vector<float> thetas;       ///< the θ values, ascending [1]
  std::vector<sim::MacKind> macs;  ///< the MACs swept, in CSV order (--mac all: every MAC)
  std::string outPath;             ///< --out FILE.csv
};

}  // namespace bhviz::app
