// Which model configuration a training run uses: a named preset with command-line overrides, or
// the configuration of the checkpoint it resumes or starts from. Each trainer declares its
// overrides as a table (ConfigOverride), which add_model_options turns into options and
// resolve_model_config applies; the rule lives here once.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstddef>
#include <functional>
#include <string>

#include "core/run/error.hpp"
#include "core/run/program.hpp"

namespace sp::train {

// A field of the model configuration and the integer option that overrides it (flag "--width",
// 0 = not given), with its help text. An entry without an option (flag, option and help null) is a
// field no option sets, compared when -m names a checkpoint's model.
template <typename Options, typename Config>
struct ConfigOverride {
  const char* flag;
  int Options::*option;
  int Config::*field;
  const char* help;
};

// Declares -m,--model (model_given: whether the command line named one) and then every override
// of the table, in its order, each from 1 to max (0, the field's default, means not given, so an
// explicit 0 is refused rather than silently read as "the preset's").
template <typename Options, typename Config, std::size_t N>
void add_model_options(CLI::App& app, Options& o, std::string& model, bool& model_given, const std::string& model_help,
                       const ConfigOverride<Options, Config> (&overrides)[N], int max) {
  app.add_option("-m,--model", model, model_help)->capture_default_str()->each([&model_given](const std::string&) {
    model_given = true;
  });
  for (const auto& f : overrides)
    if (f.flag) app.add_option(f.flag, o.*f.option, f.help)->check(CLI::Range(1, max));
}

// What a trainer's model offers the rule: its presets, its validation, and what its own options
// change beyond the integer overrides (customised: whether they change anything; apply: make the change).
template <typename Config>
struct ModelPresets {
  std::function<Config(const std::string&)> preset;  // throws sp::Error for an unknown name
  std::function<void(const Config&)> validate;       // throws sp::Error naming the problem
  bool customised = false;
  std::function<void(Config&)> apply = [](Config&) {};
};

// With a checkpoint (non-null): its configuration. -m may name the checkpoint's model (the preset
// agrees with it in every field that no given option overrides), and each given override must
// equal the checkpoint's value. Without one: the preset `model` with the given overrides, named
// "<model>-custom" when anything was overridden, validated. Throws UsageError naming the flag
// (and ckpt_flag, the option that named the checkpoint) for every disagreement or bad value.
template <typename Options, typename Config, std::size_t N>
Config resolve_model_config(const Options& o, const std::string& model, bool model_given, const Config* checkpoint,
                            const std::string& ckpt_flag, const ModelPresets<Config>& presets,
                            const ConfigOverride<Options, Config> (&overrides)[N]) {
  auto preset = [&] {
    try {
      return presets.preset(model);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  };
  auto given = [&](const ConfigOverride<Options, Config>& f) { return f.option && o.*f.option != 0; };
  if (checkpoint) {
    const Config& c = *checkpoint;
    if (model_given) {  // -m may repeat the checkpoint's model, not change it
      const Config p = preset();
      for (const auto& f : overrides)
        if (!given(f) && p.*f.field != c.*f.field)
          throw UsageError(
              fmt::format("--model {} differs from the {} checkpoint's model {}", model, ckpt_flag, c.name));
    }
    for (const auto& f : overrides)
      if (given(f) && o.*f.option != c.*f.field)
        throw UsageError(
            fmt::format("{} {} differs from the {} checkpoint's {}", f.flag, o.*f.option, ckpt_flag, c.*f.field));
    return c;
  }
  Config c = preset();
  bool customised = presets.customised;
  for (const auto& f : overrides)
    if (given(f)) {
      c.*f.field = o.*f.option;
      customised = true;
    }
  presets.apply(c);
  if (customised) c.name = model + "-custom";
  try {
    presets.validate(c);
  } catch (const Error& e) {
    throw UsageError(fmt::format("bad model configuration: {}", e.what()));
  }
  return c;
}

}  // namespace sp::train
