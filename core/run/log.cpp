#include "core/run/log.hpp"

#include <chrono>
#include <cstdio>

namespace sp::log {
namespace {

// Process-wide logging settings: the one piece of global state, set once at start-up.
struct Settings {
  int rank = -1;
  int size = 0;
  Level level = Level::info;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};
Settings& settings() {
  static Settings s;
  return s;
}

}  // namespace

void set_rank(int rank, int size) {
  settings().rank = rank;
  settings().size = size;
}

void set_level(Level level) { settings().level = level; }

void write(Level level, std::string_view message) {
  const Settings& s = settings();
  if (level < s.level) return;
  if (level <= Level::info && s.rank > 0) return;  // info/debug: rank 0 speaks for everyone
  static constexpr const char* kTag[] = {"debug", "info", "warn", "error"};
  double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.start).count();
  std::string rank = s.rank < 0 ? "?" : std::to_string(s.rank);
  // One fprintf per line so lines from different ranks do not interleave mid-line.
  std::string line =
      fmt::format("[scaleprobe r{}/{} {:7.3f}s {}] {}\n", rank, s.size, t, kTag[static_cast<int>(level)], message);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace sp::log
