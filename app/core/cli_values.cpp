#include "app/core/cli_values.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "app/core/cli.h"
#include "sim/common/keys.h"

namespace bhviz::app {

std::string quoted(const std::string& text) { return "'" + text + "'"; }

namespace {

// strtoll, strtoull and strtod skip leading white space, and strtoull negates "-1": a number
// must start as one, so that " -1" is not taken for 18446744073709551615.
bool startsLikeNumber(const std::string& text, bool signAllowed) {
  if (text.empty()) return false;
  const char c = text[0];
  return (c >= '0' && c <= '9') || c == '.' || (signAllowed && (c == '-' || c == '+'));
}

}  // namespace

long long toInteger(const std::string& option, const std::string& text, long long lo,
                    long long hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (!startsLikeNumber(text, true) || *end != '\0') {
    throw UsageError(option + " = " + quoted(text) + " is not an integer: must be in " + range);
  }
  if (errno == ERANGE || v < lo || v > hi) {
    throw UsageError(option + " = " + text + " is out of range: must be in " + range);
  }
  return v;
}

std::uint64_t toUnsigned(const std::string& option, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (!startsLikeNumber(text, false) || *end != '\0' || errno == ERANGE) {
    throw UsageError(option + " = " + quoted(text) +
                     " is not an unsigned integer: must be in [0, 18446744073709551615]");
  }
  return v;
}

// Only the syntax is checked here; the ranges are sim::validate's, so they live in one place.
// The parameters are single precision: a number that is not zero but rounds to 0 or to
// infinity as a float is refused here, with the text as typed.
float toFloat(const std::string& option, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const bool overflow = errno == ERANGE && std::abs(v) > 1.0;
  if (!startsLikeNumber(text, true) || *end != '\0' || std::isnan(v)) {
    throw UsageError(option + " = " + quoted(text) + " is not a number");
  }
  const auto f = static_cast<float>(v);
  if (overflow || (std::isfinite(v) && std::isinf(f))) {
    throw UsageError(option + " = " + text + " is out of range: too large for single precision " +
                     "(at most 3.4e38)");
  }
  if (v != 0.0 && std::abs(f) < std::numeric_limits<float>::min()) {
    throw UsageError(option + " = " + text + " is out of range: too small for single precision " +
                     "(nonzero values at least 1.2e-38)");
  }
  return f;
}

bool toOnOff(const std::string& option, const std::string& text) {
  if (text == "on") return true;
  if (text == "off") return false;
  throw UsageError(option + " = " + quoted(text) + " is not known: must be on or off");
}

// "1280x720" → {1280, 720}.
std::pair<int, int> toSize(const std::string& text) {
  const std::string range =
      "each side in [" + std::to_string(kMinImageSide) + ", " + std::to_string(kMaxImageSide) + "]";
  const std::size_t x = text.find('x');
  if (x == std::string::npos) {
    throw UsageError("--size = " + quoted(text) + " is not WxH (e.g. 1280x720): " + range);
  }
  auto side = [&](const std::string& part) {
    for (char c : part) {
      if (c < '0' || c > '9') {
        throw UsageError("--size = " + quoted(text) + " is not WxH (e.g. 1280x720): " + range);
      }
    }
    errno = 0;
    const long long v = part.empty() ? -1 : std::strtoll(part.c_str(), nullptr, 10);
    if (part.empty() || errno == ERANGE || v < kMinImageSide || v > kMaxImageSide) {
      throw UsageError("--size = " + text + " is out of range: " + range);
    }
    return static_cast<int>(v);
  };
  return {side(text.substr(0, x)), side(text.substr(x + 1))};
}

// "2:6" → {2, 6}.
std::pair<int, int> toLevels(const std::string& text) {
  const std::string rule = "must be A:B with 0 <= A <= B <= " + std::to_string(sim::kMaxLevel);
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) {
    throw UsageError("--overlay-levels = " + quoted(text) + " is not A:B: " + rule);
  }
  const std::string a = text.substr(0, colon);
  const std::string b = text.substr(colon + 1);
  const long long lo = toInteger("--overlay-levels", a, 0, sim::kMaxLevel);
  const long long hi = toInteger("--overlay-levels", b, 0, sim::kMaxLevel);
  if (lo > hi) throw UsageError("--overlay-levels = " + text + " is out of range: " + rule);
  return {static_cast<int>(lo), static_cast<int>(hi)};
}

}  // namespace bhviz::app
