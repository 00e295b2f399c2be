#include "app/core/sweep.h"

#include <omp.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <stdexcept>

#include "app/core/backend_select.h"
#include "app/core/cli.h"
#include "app/core/output.h"
#include "sim/accuracy.h"
#include "sim/ic/initial_conditions.h"
#include "sim/ic/scenario_file.h"

namespace bhviz::app {

namespace {

constexpr const char* kSweepForm =
    "must be theta=FROM:TO:STEP with 0 < FROM <= TO <= 1.5 and "
    "STEP > 0 (e.g. theta=0.2:1.0:0.1)";

bool toNumber(const std::string& text, float& v) {
  errno = 0;
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE) return false;
  v = static_cast<float>(d);
  return true;
}

}  // namespace

void writeSweepCsv(std::ostream& out, const std::vector<sim::SweepPoint>& points) {
  out << kSweepCsvHeader << '\n';
  char line[256];
  for (const sim::SweepPoint& pt : points) {
    std::snprintf(line, sizeof line, "%s,%.6g,%.9g,%.9g,%.6g,%.6g",
                  std::string(sim::toString(pt.mac)).c_str(), static_cast<double>(pt.param),
                  pt.s.error.median, pt.s.error.p99, pt.s.msPerForce, pt.s.interactionsPerParticle);
    out << line << '\n';
  }
}

std::vector<float> parseSweepSpec(const std::string& text) {
  const std::string prefix = "theta=";
  const std::string bad = "--sweep = '" + text + "' is not valid: " + kSweepForm;
  if (text.compare(0, prefix.size(), prefix) != 0) throw UsageError(bad);
  const std::string rest = text.substr(prefix.size());
  const std::size_t c1 = rest.find(':');
  const std::size_t c2 = c1 == std::string::npos ? c1 : rest.find(':', c1 + 1);
  if (c2 == std::string::npos || rest.find(':', c2 + 1) != std::string::npos) throw UsageError(bad);
  float from = 0.0f, to = 0.0f, step = 0.0f;
  if (!toNumber(rest.substr(0, c1), from) || !toNumber(rest.substr(c1 + 1, c2 - c1 - 1), to) ||
      !toNumber(rest.substr(c2 + 1), step)) {
    throw UsageError(bad);
  }
  try {
    return sim::sweepThetas(from, to, step);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--sweep = '" + text + "' is out of range: " + e.what());
  }
}

int runSweep(const Options& o, std::ostream& out, std::ostream& /*err*/) {
  BackendSelection selection = selectBackend(o.backend, o.n);
  requireWithinLimits(o.params, *selection.backend);
  if (o.threads > 0) omp_set_num_threads(o.threads);
  if (!o.quiet && !selection.note.empty()) out << selection.note << '\n';
  // The first backend serves the first point; later points reuse it (sim::sweep's scratch).
  auto makeBackend = [&]() -> std::unique_ptr<sim::Backend> {
    if (selection.backend) return std::move(selection.backend);
    return selectBackend(o.backend, o.n).backend;
  };
  const sim::ReferenceSum sum = selection.backend->referenceSum();
  const std::string backendName(selection.backend->name());
  const sim::Particles state = sim::buildScenario(sim::resolveScenario(o.scenario), o.n, o.seed);
  const sim::AccuracyReference ref =
      sim::makeReference(state, o.params.softening, kSweepSample, o.seed, sum);
  if (!o.quiet) {
    out << "bhviz: sweep of " << o.scenario << ", N = " << o.n << ", seed " << o.seed << ", "
        << o.sweep.macs.size() * o.sweep.thetas.size() << " points, error sample " << ref.ids.size()
        << ", " << backendName << " backend\n";
  }
  const std::vector<sim::SweepPoint> points =
      sim::sweep(state, o.params, makeBackend, o.sweep.macs, o.sweep.thetas, ref);
  if (!o.quiet) writeSweepCsv(out, points);
  writeFileAtomically(o.sweep.outPath, [&](std::ostream& f) { writeSweepCsv(f, points); });
  if (!o.quiet) out << "bhviz: sweep written to " << o.sweep.outPath << '\n';
  return 0;
}

}  // namespace bhviz::app
