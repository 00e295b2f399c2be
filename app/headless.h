#pragma once
// The headless run: build the scenario, step it, report progress, write the outputs. The
// window (a later front end) will drive the same Simulation; nothing here knows about it.

#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>

#include "app/cli.h"
#include "sim/backend.h"
#include "sim/simulation.h"

namespace bhviz::app {

/// The backend asked for is not in this build. what() is the whole line; exit status 2.
struct BackendUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct BackendSelection {
  std::unique_ptr<sim::Backend> backend;
  std::string note;  ///< one line for the user when the choice was made for them, else empty
};

/// The one place that maps --backend onto a backend for n particles: auto takes CUDA when it
/// is built, a device exists and n fits in its memory, else the CPU (and says why). Throws
/// BackendUnavailable when `cuda` was asked for and cannot run.
BackendSelection selectBackend(BackendChoice choice, std::size_t n);

/// One line naming what went wrong and up to 10 of the particles it happened to.
std::string describe(const sim::NonFiniteState& e);

/// Runs `opts`: progress lines to `out` (unless quiet), run errors to `err`. Returns the exit
/// status: 0, or 1 when the state became non-finite (the stats file is still written, marked
/// aborted). Throws BackendUnavailable, and std::exception for anything unexpected.
int runHeadless(const Options& opts, std::ostream& out, std::ostream& err);

}  // namespace bhviz::app
