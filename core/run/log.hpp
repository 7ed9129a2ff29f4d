// Rank-aware diagnostics on stderr. Results go to stdout (rank 0 only), diagnostics never do, so
// `prog > table.txt` captures a clean table. info() prints on rank 0 only; warn()/error() print on
// whichever rank calls them, prefixed with that rank.
#pragma once
#include <fmt/format.h>

#include <string_view>

namespace sp::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3 };

// Called once by MpiSession; before that, messages carry rank "?".
void set_rank(int rank, int size);
void set_level(Level level);
void write(Level level, std::string_view message);

template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... a) {
  write(Level::debug, fmt::format(f, std::forward<Args>(a)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... a) {
  write(Level::info, fmt::format(f, std::forward<Args>(a)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... a) {
  write(Level::warn, fmt::format(f, std::forward<Args>(a)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... a) {
  write(Level::error, fmt::format(f, std::forward<Args>(a)...));
}

}  // namespace sp::log
