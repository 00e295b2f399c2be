#pragma once
// The command line's values, read as typed: integers, unsigned integers and single-precision
// numbers that must start as numbers, on/off, WxH sizes and A:B level ranges. Each throws
// UsageError naming the option and the allowed range or form.

#include <cstdint>
#include <string>
#include <utility>

namespace bhviz::app {

/// 'text', quoted as the messages quote what the user typed.
std::string quoted(const std::string& text);

long long toInteger(const std::string& option, const std::string& text, long long lo, long long hi);
std::uint64_t toUnsigned(const std::string& option, const std::string& text);
/// Only the syntax and single precision's range: the parameters' ranges are sim::validate's.
float toFloat(const std::string& option, const std::string& text);
bool toOnOff(const std::string& option, const std::string& text);
/// "1280x720" → {1280, 720}, each side in [kMinImageSide, kMaxImageSide].
std::pair<int, int> toSize(const std::string& text);
/// "2:6" → {2, 6}, 0 <= A <= B <= sim::kMaxLevel.
std::pair<int, int> toLevels(const std::string& text);

}  // namespace bhviz::app
