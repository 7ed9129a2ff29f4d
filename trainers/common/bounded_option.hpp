// The trainers' usual numeric option: a value checked against [min, max], its default shown in
// --help. One call per option keeps the option lists short enough to read as lists.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <type_traits>

namespace sp::train {

// min and max take the option's own type (int, long long, double), so the range message and its
// check are those of that type.
template <typename T>
CLI::Option* add_bounded(CLI::App& app, const std::string& name, T& value, const std::string& help,
                         std::type_identity_t<T> min, std::type_identity_t<T> max) {
  return app.add_option(name, value, help)->check(CLI::Range(min, max))->capture_default_str();
}

}  // namespace sp::train
