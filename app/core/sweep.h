#pragma once
// The headless accuracy sweep: error and cost of the tree forces against direct summation over
// a range of θ (mapped onto each MAC's own parameter, sim/accuracy.h), written as CSV.

#include <iosfwd>
#include <string>
#include <vector>

#include "app/core/settings.h"
#include "sim/accuracy.h"
#include "sim/params.h"

namespace bhviz::app {

struct Options;

/// The CSV header, exactly as written.
inline constexpr const char* kSweepCsvHeader =
    "mac,param,median_error,p99_error,ms_per_force,interactions_per_particle";
/// Particles in the error sample of each point [1].
inline constexpr std::size_t kSweepSample = 2000;

/// "theta=0.2:1.0:0.1" → 0.2, 0.3, …, 1.0. Throws UsageError (app/cli.h): one line naming
/// --sweep and the expected form.
std::vector<float> parseSweepSpec(const std::string& text);

/// The header, then one row per point (the MAC's name, its parameter, the errors, the cost).
void writeSweepCsv(std::ostream& out, const std::vector<sim::SweepPoint>& points);

/// Runs the sweep of `o` (o.sweep.wanted): progress lines to `out` unless quiet, then the CSV,
/// written atomically. Returns the exit status (0).
int runSweep(const Options& o, std::ostream& out, std::ostream& err);

}  // namespace bhviz::app
