// The JSON layer of scenario files (sim/ic/scenario_json.h): the reads and scans that keep a
// hostile file to one ScenarioError line.
#include "sim/ic/scenario_json.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace bhviz::sim::detail {

/// `byte` (0-based) of `text` as "line L, column C", counted as nlohmann counts them.
std::string textPosition(std::string_view text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    column = text[i] == '\n' ? 1 : column + 1;
    line += text[i] == '\n' ? 1 : 0;
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

/// At most 80 characters with control bytes as \xNN, so that a message stays one readable line
/// (and sends no terminal escapes) whatever the file holds. Bytes ≥ 0x80 are kept when `utf8`
/// (nlohmann has checked the file's strings), else escaped too (its error text quotes raw bytes).
std::string printable(std::string_view s, bool utf8) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (out.size() >= 77) {
      // Cut at a character boundary: drop the lead and continuation bytes of a split one.
      while (utf8 && !out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) {
        out.pop_back();
      }
      if (utf8 && !out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
      return out + "...";
    }
    if ((c >= 0x20 && c < 0x7f) || (utf8 && c >= 0x80)) {
      out += ch;
    } else {
      out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    }
  }
  return out;
}

/// The whole of `token` is a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
bool isJsonNumber(std::string_view t) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    return i > from;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (i < t.size() && t[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < t.size() && t[i] == '.' && (++i, !digits())) return false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == t.size();
}

/// The text as nlohmann will parse it, and the numbers it cannot hold.
struct ScannedText {
  std::string text;                       ///< overflowing numbers blanked to "0" and spaces
  std::vector<std::size_t> overflows;     ///< their ordinals among the text's numbers, increasing
  std::vector<bool> negative;             ///< per overflow: -inf rather than +inf
  std::size_t stray = std::string::npos;  ///< byte of an overflow in a malformed number
};

/// Walks the text outside strings: refuses deep nesting, finds numbers beyond a double.
ScannedText scanScenarioText(std::string_view text, const std::string& source) {
  constexpr std::string_view kNumberChars = "0123456789+-.eE";
  ScannedText s{std::string(text), {}, {}};
  bool inString = false, escaped = false;
  std::size_t depth = 0, numbers = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (escaped) {
        escaped = false;
      } else {
        escaped = c == '\\';
        inString = c != '"';
      }
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxScenarioDepth) {
        throw ScenarioError(source + ": invalid JSON at " + textPosition(text, i) +
                            ": nested deeper than " + std::to_string(kMaxScenarioDepth) +
                            " levels (a scenario needs 4)");
      }
    } else if (c == ']' || c == '}') {
      depth -= depth > 0 ? 1 : 0;
    } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t end = i;
      while (end < text.size() && kNumberChars.find(text[end]) != std::string_view::npos) ++end;
      const std::string token(text.substr(i, end - i));
      const bool overflow = std::isinf(std::strtod(token.c_str(), nullptr));
      if (overflow && isJsonNumber(token)) {
        s.overflows.push_back(numbers);
        s.negative.push_back(c == '-');
        s.text.replace(i, token.size(), "0" + std::string(token.size() - 1, ' '));
      } else if (overflow && s.stray == std::string::npos) {
        s.stray = i;  // "1e400e": nlohmann reads "1e400" and reports the overflow first
      }
      ++numbers;
      i = end - 1;
    }
  }
  return s;
}

/// "<source>: invalid JSON at line L, column C: <reason>" from nlohmann's parse_error.
ScenarioError parseFailure(const nlohmann::json::parse_error& e, std::string_view text,
                           const std::string& source) {
  // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while
  // parsing value - invalid literal; last read: 'tru,'": the reason is what follows " - ".
  std::string reason = e.what();
  const std::size_t dash = reason.find(" - ");
  const std::size_t colon = reason.find(": ");
  if (dash != std::string::npos) {
    reason = reason.substr(dash + 3);
  } else if (colon != std::string::npos) {
    reason = reason.substr(colon + 2);
  }
  const std::size_t byte = e.byte > 0 ? e.byte - 1 : 0;  // e.byte counts the offending byte
  return ScenarioError(source + ": invalid JSON at " + textPosition(text, byte) + ": " +
                       printable(reason));
}

/// Parses scanned text. An overflowing number becomes ±infinity (the range checks name its key);
/// a key given twice in one object is refused (nlohmann would keep the last one silently).
nlohmann::json parseScenarioJson(std::string_view text, const std::string& source) {
  using Json = nlohmann::json;
  // Said here, not by nlohmann, whose wording for an empty input differs between versions.
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw ScenarioError(source + ": invalid JSON at line 1, column 1: unexpected end of input " +
                        "(the file is empty)");
  }
  const ScannedText scanned = scanScenarioText(text, source);
  std::size_t number = 0, next = 0;
  std::vector<std::set<std::string>> keys;
  auto callback = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) keys.emplace_back();
    if (event == Json::parse_event_t::object_end) keys.pop_back();
    if (event == Json::parse_event_t::key &&
        !keys.back().insert(parsed.get<std::string>()).second) {
      throw ScenarioError(source + ": the key '" + printable(parsed.get<std::string>(), true) +
                          "' appears twice in one object: give each key once");
    }
    if (event == Json::parse_event_t::value && parsed.is_number()) {
      if (next < scanned.overflows.size() && scanned.overflows[next] == number) {
        parsed = (scanned.negative[next++] ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
      }
      ++number;
    }
    return true;
  };
  try {
    return Json::parse(scanned.text, callback);
  } catch (const Json::parse_error& e) {
    throw parseFailure(e, text, source);
  } catch (const Json::exception&) {
    // Only an overflow the scan left alone, in text that is malformed around it.
    const std::string at =
        scanned.stray == std::string::npos ? "" : " at " + textPosition(text, scanned.stray);
    throw ScenarioError(source + ": invalid JSON" + at + ": a number is too large for a double");
  }
}

/// The text of a regular file of at most kMaxScenarioBytes. Throws ScenarioError.
std::string readScenarioText(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_type type = fs::status(path, ec).type();
  if (type == fs::file_type::not_found) {
    throw ScenarioError(path + ": cannot open the scenario file: no such file");
  }
  if (ec) throw ScenarioError(path + ": cannot open the scenario file: " + ec.message());
  if (type == fs::file_type::directory) {
    throw ScenarioError(path + ": is a directory, not a scenario file");
  }
  // A FIFO would block the open until a writer came; a device may never end.
  if (type != fs::file_type::regular) {
    throw ScenarioError(path +
                        ": is not a regular file (a FIFO, device or socket): only "
                        "regular files are read as scenarios");
  }
  const std::string tooLong = path + ": is larger than " + std::to_string(kMaxScenarioBytes) +
                              " bytes (1 MiB), the limit for a scenario file";
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxScenarioBytes) throw ScenarioError(tooLong);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path + ": cannot open the scenario file (unreadable)");
  // One byte past the limit: a file that grew since, or reports size 0 (/proc), is caught too.
  std::string text(kMaxScenarioBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw ScenarioError(path + ": cannot read the scenario file");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxScenarioBytes) throw ScenarioError(tooLong);
  return text;
}

}  // namespace bhviz::sim::detail
