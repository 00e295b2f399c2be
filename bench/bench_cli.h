#pragma once
// The benchmarks' command-line parse: an invalid option exits 2 before any work, as bhviz's
// does (CLI11's own statuses are 100 and up); --help and --version exit 0.
#include <CLI/CLI.hpp>
#include <optional>

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

}  // namespace bhviz::bench
