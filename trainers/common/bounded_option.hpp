// The trainers' usual numeric option: a value checked against [min, max], its default shown in
// --help. One call per option keeps the option lists short enough to read as lists.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

namespace sp::train {

// A real-valued option's check: CLI11's Range and PositiveNumber compare with < and >, which a
// NaN passes (so `--lr nan` trained, diverging a step later), and print their bounds with %f.
inline CLI::Validator finite_in(double min, double max, bool min_excluded = false) {
  const std::string range = min_excluded ? fmt::format("> {:g}", min) : fmt::format("in [{:g} - {:g}]", min, max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return fmt::format("{} is not a number", text);
        if (!std::isfinite(v)) return fmt::format("{} is not a finite number", text);
        if (v < min || v > max || (min_excluded && v == min)) return fmt::format("{} is not {}", text, range);
        return {};
      },
      "FLOAT " + range);
}

// min and max take the option's own type (int, long long, double), so the range message and its
// check are those of that type.
template <typename T>
CLI::Option* add_bounded(CLI::App& app, const std::string& name, T& value, const std::string& help,
                         std::type_identity_t<T> min, std::type_identity_t<T> max) {
  if constexpr (std::is_floating_point_v<T>)
    return app.add_option(name, value, help)->check(finite_in(min, max))->capture_default_str();
  else
    return app.add_option(name, value, help)->check(CLI::Range(min, max))->capture_default_str();
}

// A learning rate and the like: finite and above zero.
inline CLI::Option* add_positive(CLI::App& app, const std::string& name, double& value, const std::string& help) {
  return app.add_option(name, value, help)
      ->check(finite_in(0, std::numeric_limits<double>::max(), true))
      ->capture_default_str();
}

}  // namespace sp::train
