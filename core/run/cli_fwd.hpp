// CLI11's App, declared for headers that only pass a CLI::App& along. CLI11 is header-only and
// costs about 9 s of compile per translation unit that includes it (times three builds in CI), so
// only the .cpp files that add options or parse include <CLI/CLI.hpp>.
#pragma once

namespace CLI {
class App;
}  // namespace CLI
