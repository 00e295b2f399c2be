#pragma once
// The command line: parsed and validated in full before any work starts, so a typo costs
// nothing and every mistake is one line naming the option (exit status 2).

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/core/options.h"

namespace bhviz::app {

/// --block-steps without --dt: the longest step is the scenario's shared dt times this, so
/// that with the default 8 bin levels the finest step is 1/32 of the shared one.
inline constexpr float kBlockDtFactor = 8.0f;
/// --size: each side of a picture in [kMinImageSide, kMaxImageSide] pixels.
inline constexpr int kMinImageSide = 16;
inline constexpr int kMaxImageSide = 8192;

/// Parses and validates argv (argv[0] is the program name). Returns nullopt when --help or
/// --version was printed to `out` (exit status 0). Throws UsageError otherwise on any mistake.
std::optional<Options> parseCommandLine(int argc, const char* const* argv, std::ostream& out);
/// The same from a list of arguments without the program name (for tests and scripts).
std::optional<Options> parseCommandLine(const std::vector<std::string>& args, std::ostream& out);

/// `text` with line breaks replaced by spaces: every message we print is a single line.
std::string oneLine(std::string text);

}  // namespace bhviz::app
