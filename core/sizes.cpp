#include "sizes.hpp"

#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "error.hpp"

namespace sp {

std::uint64_t parse_size(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || s.empty() || !(value >= 0))
    fail("malformed size '{}': expected a number with an optional K/M/G suffix", text);
  std::string suffix(end, s.data() + s.size());
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (suffix.empty() || suffix == "B") scale = 1;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB") scale = 1024.0;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB") scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB") scale = 1024.0 * 1024 * 1024;
  else fail("malformed size '{}': unknown suffix '{}' (use K, M or G)", text, suffix);
  double bytes = value * scale;
  if (bytes != std::floor(bytes)) fail("malformed size '{}': not a whole number of bytes", text);
  if (bytes > 1e18) fail("size '{}' is too large", text);
  return static_cast<std::uint64_t>(bytes);
}

std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) fail("{}: {} x {} does not fit in 64 bits", what, a, b);
  return out;
}

std::uint64_t physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : 0;
}

std::vector<std::uint64_t> parse_size_list(std::string_view text) {
  std::vector<std::uint64_t> out;
  if (text.empty()) fail("empty size list");
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(pos, comma - pos);
    if (item.find_first_not_of(" \t") == std::string_view::npos)
      fail("malformed size list '{}': empty item", text);
    out.push_back(parse_size(item));
    pos = comma + 1;
  }
  return out;
}

std::vector<std::uint64_t> size_range(std::uint64_t min, std::uint64_t max, double factor) {
  if (min > max) fail("minimum size {} is larger than maximum size {}", min, max);
  if (min == max) return {min};
  if (!(factor > 1.0)) fail("size factor must be greater than 1 (got {})", factor);
  std::vector<std::uint64_t> out;
  double v = static_cast<double>(min);
  if (min == 0) {
    out.push_back(0);
    v = 1;
  }
  while (v <= static_cast<double>(max)) {
    auto s = static_cast<std::uint64_t>(std::llround(v));
    if (out.empty() || s != out.back()) out.push_back(s);
    v *= factor;
  }
  return out;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  if (v == std::floor(v)) return fmt::format("{}{}", static_cast<std::uint64_t>(v), kUnits[u]);
  return fmt::format("{:.3g}{}", v, kUnits[u]);
}

}  // namespace sp
