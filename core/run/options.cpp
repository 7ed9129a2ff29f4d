#include "core/run/options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>

#include "core/run/log.hpp"
#include "core/run/program.hpp"
#include "core/run/sizes.hpp"

namespace sp {

void check_output_file(const std::string& flag, const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return;
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) throw UsageError(fmt::format("{} {}: is a directory", flag, path));
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) throw UsageError(fmt::format("{} {}: no folder {}", flag, path, dir.string()));
}

void SizeOptions::add_to(CLI::App& app) {
  // --minbytes, --maxbytes, --stepfactor, --warmup_iters: nccl-tests' names (docs/binaries.md's option map).
  app.add_option("-b,--min-bytes,--minbytes", min, "smallest message size (K/M/G suffixes)")->capture_default_str();
  app.add_option("-e,--max-bytes,--maxbytes", max, "largest message size")->capture_default_str();
  app.add_option("-f,--factor,--stepfactor", factor, "multiplication factor between sizes (> 1)")
      ->capture_default_str();
  app.add_option("--sizes", list, "explicit comma-separated size list, e.g. 8,1K,64K (overrides -b/-e/-f)");
}

std::vector<std::uint64_t> SizeOptions::resolve() const {
  try {
    if (!list.empty()) return parse_size_list(list);
    return size_range(parse_size(min), parse_size(max), factor);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

bool RunOptions::parse(CLI::App& app, const Session& s) const {
  if (!parse_command_line(app, s)) return false;
  apply_log_level();
  check_output_file("--json", json);
  return true;
}

bool RunOptions::parse(const Session& s, const std::string& description,
                       const std::function<void(CLI::App&)>& add_options) const {
  CLI::App app{description, s.program};
  add_options(app);
  return parse(app, s);
}

void RunOptions::add_to(CLI::App& app) {
  // Every timed iteration is a row of the trace, held per rank until the run ends (about 80 bytes
  // with its sample): 10^6 per case keeps a rank's samples of one case under 100 MB.
  app.add_option("-n,--iters", iters, "timed iterations per case (0 = adapt to size; at most 1000000)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("-w,--warmup,--warmup_iters", warmup, "untimed warm-up iterations per case (-1 = adapt)")
      ->check(CLI::Range(-1, 1000000))
      ->capture_default_str();
  app.add_option("--sync", sync, "synchronisation between timed iterations: none or barrier (untimed)")
      ->check(CLI::IsMember({"none", "barrier"}))
      ->capture_default_str();
  app.add_flag("--off-cache", off_cache, "evict the buffers from every cache level before each timed call (untimed)");
  app.add_option("--scaling", scaling, "strong: sizes as given; weak: sizes are per rank (x the number of ranks)")
      ->check(CLI::IsMember({"strong", "weak"}))
      ->capture_default_str();
  app.add_option("-o,--trace", trace, "HDF5 trace path (default traces/<program>-<time>.h5)");
  app.add_option("--json", json,
                 "also write the summary table and the provenance to this JSON file (schema: "
                 "docs/trace-schema.md); not written when a result is wrong");
  app.add_flag("-q,--quiet", quiet, "print only the result table (no progress on stderr)");
  app.add_flag("-v,--verbose", verbose, "also log every case as it starts (stderr)");
}

void RunOptions::apply_log_level() const {
  if (quiet)
    log::set_level(log::Level::warn);
  else if (verbose)
    log::set_level(log::Level::debug);
}

std::vector<std::string> split_list(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = std::min(text.find(',', pos), text.size());
    out.push_back(text.substr(pos, comma - pos));
    if (out.back().empty()) throw UsageError(fmt::format("malformed {} '{}': empty item", what, text));
    pos = comma + 1;
  }
  return out;
}

std::vector<std::string> parse_choice_list(const std::string& text, const std::vector<std::string>& all_values,
                                           const std::string& what) {
  if (text == "all") return all_values;
  std::vector<std::string> out = split_list(text, what + " list");
  for (const std::string& item : out) {
    if (std::find(all_values.begin(), all_values.end(), item) == all_values.end()) {
      std::string choices;
      for (auto& v : all_values) choices += (choices.empty() ? "" : ", ") + v;
      throw UsageError(fmt::format("unknown {} '{}' in '{}' (choose from {}, or all)", what, item, text, choices));
    }
  }
  return out;
}
long parse_bounded_integer(const std::string& name, const std::string& text, long min, long max,
                           const std::string& what) {
  long value = 0;  // from_chars: no leading space or '+', no overflow, the whole text or nothing
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min || value > max)
    fail("{}='{}': expected {} from {} to {}", name, text, what, min, max);
  return value;
}

}  // namespace sp
