#pragma once
// The headless run: build the scenario, step it, report progress, write the outputs. The
// window (a later front end) will drive the same Simulation; nothing here knows about it.

#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>

#include "app/core/backend_select.h"
#include "app/core/cli.h"
#include "app/core/sim_session.h"
#include "sim/backend.h"
#include "sim/simulation.h"

namespace bhviz::app {

/// Runs `opts`: progress lines to `out` (unless quiet), run errors to `err`. Returns the exit
/// status: 0, or 1 when the state became non-finite (the stats file is still written, marked
/// aborted). Throws BackendUnavailable, and std::exception for anything unexpected.
int runHeadless(const Options& opts, std::ostream& out, std::ostream& err);

}  // namespace bhviz::app
