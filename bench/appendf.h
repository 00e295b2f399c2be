#pragma once
// printf into a std::string, for the benchmarks' markdown tables.

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace bhviz::bench {

/// Appends printf's output to `out`, as long as it takes.
[[gnu::format(printf, 2, 3)]] inline void appendf(std::string& out, const char* format, ...) {
  std::va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int length = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  if (length > 0) {
    std::vector<char> text(static_cast<std::size_t>(length) + 1);
    std::vsnprintf(text.data(), text.size(), format, again);
    out.append(text.data(), static_cast<std::size_t>(length));
  }
  va_end(again);
}

}  // namespace bhviz::bench
