#pragma once
// The benchmarks' command-line checks: an invalid option or value exits 2 before any work, as
// bhviz's do (CLI11's own statuses are 100 and up); --help and --version exit 0.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <optional>
#include <string>

#include "sim/ic/initial_conditions.h"
#include "sim/params.h"

namespace bhviz::bench {

/// The exit status after CLI11 handled a parse error: 0 for --help, else 2.
inline int exitStatus(const CLI::App& app, const CLI::Error& e) { return app.exit(e) == 0 ? 0 : 2; }

/// Parses argv into `app`; nullopt to go on, or the status main should return with.
inline std::optional<int> parseOrExit(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return exitStatus(app, e);
  }
  return std::nullopt;
}

/// The run's values CLI11 cannot check: the parameters, the scenario's name and N. Their
/// message (InvalidParameter's) where one is bad, for an exit 2 before any work.
inline std::optional<std::string> invalidRun(const sim::SimParams& p, const std::string& scenario,
                                             std::size_t n) {
  try {
    sim::validate(p);
    (void)sim::scenarioInfo(scenario);
    if (n == 0) throw sim::InvalidParameter("--n must be at least 1");
  } catch (const sim::InvalidParameter& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace bhviz::bench
