#pragma once
// The JSON layer of scenario files, for sim/ic/scenario_file.cpp. A file is read only when it is a
// regular file of at most kMaxScenarioBytes, so a FIFO cannot hang the reader and /dev/zero cannot
// exhaust memory. Its text is scanned before nlohmann sees it: nesting deeper than
// kMaxScenarioDepth is refused with its line and column, and a number too large for a double (which
// nlohmann reports without saying where) is blanked and parsed as ±infinity, so that the key's
// range check names it. Every error is one ScenarioError line naming the file; nlohmann's own text
// is never passed on raw.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sim/ic/scenario_file.h"

namespace bhviz::sim::detail {

/// A scenario is a page of JSON (the shipped ones are under 2 KiB): 1 MiB is generous [bytes].
constexpr std::size_t kMaxScenarioBytes = std::size_t{1} << 20;
/// The deepest valid file nests 4 levels (camera.orbit[k]); the rest is headroom [levels].
constexpr std::size_t kMaxScenarioDepth = 32;

/// `s` with control bytes (and, unless utf8, bytes above 0x7e) written as \xNN: safe to print.
std::string printable(std::string_view s, bool utf8 = false);
/// The text of the scenario file at `path`: a regular file of at most kMaxScenarioBytes.
/// Throws ScenarioError naming the file otherwise.
std::string readScenarioText(const std::string& path);
/// `text` parsed (after the scan for depth and numbers beyond a double); every failure is one
/// ScenarioError line naming `source` with the line and column.
nlohmann::json parseScenarioJson(std::string_view text, const std::string& source);

}  // namespace bhviz::sim::detail
