#include "core/run/sizes.hpp"

#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "core/run/error.hpp"

namespace sp {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::uint64_t suffix_scale(std::string_view text, std::string_view suffix_text) {
  std::string s(suffix_text);
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (s.empty() || s == "B") return 1;
  if (s == "K" || s == "KB" || s == "KIB") return std::uint64_t(1) << 10;
  if (s == "M" || s == "MB" || s == "MIB") return std::uint64_t(1) << 20;
  if (s == "G" || s == "GB" || s == "GIB") return std::uint64_t(1) << 30;
  fail("malformed size '{}': unknown suffix '{}' (use K, M or G)", text, suffix_text);
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  std::size_t pos = 0;
  while (pos < s.size() && is_digit(s[pos])) ++pos;
  std::string_view whole = s.substr(0, pos), fraction;
  if (pos < s.size() && s[pos] == '.') {
    std::size_t start = ++pos;
    while (pos < s.size() && is_digit(s[pos])) ++pos;
    fraction = s.substr(start, pos - start);
  }
  if (whole.empty() && fraction.empty())
    fail("malformed size '{}': expected a number with an optional K/M/G suffix", text);
  const std::uint64_t scale = suffix_scale(text, s.substr(pos));
  auto too_large = [&] { fail("size '{}' does not fit in 64 bits", text); };

  std::uint64_t units = 0;
  if (!whole.empty()) {
    auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), units);
    if (ec == std::errc::result_out_of_range) too_large();
  }
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(units, scale, &bytes)) too_large();
  // The fraction times the scale must be a whole number of bytes: digits / 10^k * scale with
  // scale <= 2^30 and digits < 10^19 is computed exactly in 128 bits.
  while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
  if (!fraction.empty()) {
    if (fraction.size() > 19) fail("malformed size '{}': not a whole number of bytes", text);
    std::uint64_t digits = 0, power = 1;
    std::from_chars(fraction.data(), fraction.data() + fraction.size(), digits);
    for (std::size_t i = 0; i < fraction.size(); ++i) power *= 10;
    const unsigned __int128 scaled = static_cast<unsigned __int128>(digits) * scale;
    if (scaled % power != 0) fail("malformed size '{}': not a whole number of bytes", text);
    if (__builtin_add_overflow(bytes, static_cast<std::uint64_t>(scaled / power), &bytes)) too_large();
  }
  return bytes;
}

std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) fail("{}: {} x {} does not fit in 64 bits", what, a, b);
  return out;
}

std::uint64_t checked_sum(std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) fail("{}: {} + {} does not fit in 64 bits", what, a, b);
  return out;
}

std::uint64_t physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  std::uint64_t bytes = 0;
  if (pages <= 0 || page <= 0 || __builtin_mul_overflow(std::uint64_t(pages), std::uint64_t(page), &bytes)) return 0;
  return bytes;
}

std::vector<std::uint64_t> parse_size_list(std::string_view text) {
  std::vector<std::uint64_t> out;
  if (text.empty()) fail("empty size list");
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(pos, comma - pos);
    if (item.find_first_not_of(" \t") == std::string_view::npos) fail("malformed size list '{}': empty item", text);
    out.push_back(parse_size(item));
    pos = comma + 1;
  }
  return out;
}

std::vector<std::uint64_t> size_range(std::uint64_t min, std::uint64_t max, double factor) {
  if (min > max) fail("minimum size {} is larger than maximum size {}", min, max);
  if (min == max) return {min};
  if (!(factor > 1.0) || !std::isfinite(factor)) fail("size factor must be greater than 1 (got {})", factor);
  std::vector<std::uint64_t> out;
  double v = static_cast<double>(min);
  if (min == 0) {
    out.push_back(0);
    v = 1;
  }
  // 2^64 as a double: values at or above it have no uint64_t (converting them is undefined).
  constexpr double kTwo64 = 18446744073709551616.0;
  for (int step = 0; v <= static_cast<double>(max) && v < kTwo64; ++step) {
    if (step == kMaxRangeSteps)
      fail("size factor {} is too close to 1: {} to {} takes more than {} steps", factor, min, max, kMaxRangeSteps);
    // At least min: above 2^53 the double may have rounded min itself down.
    const auto s = std::max(min, static_cast<std::uint64_t>(std::round(v)));
    if (s > max) break;
    if (out.empty() || s != out.back()) out.push_back(s);
    v *= factor;
  }
  return out;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  if (v == std::floor(v)) return fmt::format("{}{}", static_cast<std::uint64_t>(v), kUnits[u]);
  return fmt::format("{:.3g}{}", v, kUnits[u]);
}

std::string format_size_exact(std::uint64_t bytes) {
  // format_size's number times its unit gives the bytes back only when it is exact.
  const std::string s = format_size(bytes);
  const std::size_t unit = s.find_first_of("KMGTPE");
  const int shift =
      unit == std::string::npos ? 0 : 10 * (1 + static_cast<int>(std::string_view("KMGTPE").find(s[unit])));
  const double back = std::ldexp(std::stod(s.substr(0, unit)), shift);
  return back == static_cast<double>(bytes) ? s : std::to_string(bytes);
}

}  // namespace sp
