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

// log::info("{} ranks", n) and the like: a message at one level, formatted (checked at compile time).
template <Level L>
struct Logger {
  template <typename... Args>
  void operator()(fmt::format_string<Args...> f, Args&&... a) const {
    write(L, fmt::format(f, std::forward<Args>(a)...));
  }
};
inline constexpr Logger<Level::debug> debug{};
inline constexpr Logger<Level::info> info{};
inline constexpr Logger<Level::warn> warn{};
inline constexpr Logger<Level::error> error{};

}  // namespace sp::log
