#pragma once
// What one run of bhviz is asked to do, as the command line fills it (app/cli.h), and the
// error that says the command line asked for something impossible. Light: the settings, the
// picture options and sim's parameters only.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "app/core/settings.h"
#include "app/core/view_options.h"
#include "sim/ic/scenario_file.h"
#include "sim/params.h"

namespace bhviz::app {

/// Everything one run needs, with the scenario's suggestions already folded into `params`.
struct Options {
  sim::SimParams params;            ///< validated (sim::validate)
  bool headless = false;            ///< --headless; without it the window opens
  std::string scenario = "merger";  ///< a name from sim::scenarios(), or a scenario file's path
  std::size_t n = 20000;            ///< particles [1]: --n, else the scenario's count
  bool nGiven = false;              ///< --n was given (else the CUDA window sizes N to the backend)
  int steps = 10;                   ///< dtMax intervals to run [1]
  std::uint64_t seed = 1;           ///< initial-condition seed
  BackendChoice backend = BackendChoice::Auto;  ///< --backend; see selectBackend
  int threads = 0;                              ///< OpenMP threads; 0 = OpenMP's own default
  /// --rebalance: under mpirun, decompose again at a full step when the work's imbalance
  /// (max / mean) or its growth passes it; 0 = at every full step; < 0 = the distributed
  /// backend's default (sim::dist::kDefaultRebalance)
  double rebalance = -1.0;
  std::string statsPath;      ///< --stats FILE.json; empty = none
  std::string dumpAccelPath;  ///< --dump-accel FILE.csv; empty = none
  bool quiet = false;         ///< no progress lines on stdout
  FrameOptions frames;        ///< --frames, --screenshot and their look
  /// --quit-after K: end after K frames (window) or steps (headless); 0 = never
  int quitAfter = 0;
  // Snapshots (sim/io/snapshot.h), headless only.
  std::string loadPath;  ///< --load FILE: start from this snapshot, not --scenario; empty = none
  std::string savePath;  ///< --save FILE: the final state (.tipsy or .hdf5); empty = none
  int saveEvery = 0;     ///< --save-every K DIR: a Tipsy snapshot every K steps [steps]; 0 = never
  std::string saveDir;   ///< the DIR of --save-every
  SweepOptions sweep;    ///< --sweep, --out: an accuracy sweep instead of a run
  sim::ScenarioCamera camera;  ///< the scenario's scripted camera (none: empty)
  std::string lesson;          ///< --lesson NAME (app/core/lesson.h); empty = none
};

/// A mistake on the command line. what() is one line naming the option; exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace bhviz::app
