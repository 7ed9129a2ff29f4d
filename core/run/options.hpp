// Command-line options shared by every benchmark binary (CLI11), so all of them accept the same
// flags: -b/-e/-f or --sizes for message sizes, -n/-w for iterations, --sync, --off-cache,
// --scaling, -o.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/run/cli_fwd.hpp"

namespace sp {

struct Session;

struct SizeOptions {
  std::string min = "8", max = "64M";
  double factor = 2;
  std::string list;  // explicit list; overrides min/max/factor
  void add_to(CLI::App& app);
  std::vector<std::uint64_t> resolve() const;  // throws UsageError on malformed input
};

struct RunOptions {
  int iters = 0;    // 0 = adapt to size
  int warmup = -1;  // -1 = adapt to iters
  std::string sync = "none";
  bool off_cache = false;
  std::string scaling = "strong";  // weak: sizes (and layouts) are per rank, scaled by the rank count
  std::string trace;               // output path; default traces/<program>-<UTC time>[-job<id>].h5 (trace_output_path)
  std::string json;  // --json FILE: also the summary table and provenance as JSON (core/trace/json_report.hpp)
  bool quiet = false;
  bool verbose = false;
  void add_to(CLI::App& app);
  // Sets the log level from -q/-v (call after parsing).
  void apply_log_level() const;
  bool barrier() const { return sync == "barrier"; }
  bool weak() const { return scaling == "weak"; }
  // A benchmark program's command line: parse_command_line (false: --help or --version answered,
  // exit 0), then what these options ask before anything runs: the log level, and a --json path
  // that can be written (UsageError otherwise).
  bool parse(CLI::App& app, const Session& s) const;
  // The same on a CLI::App built here (parse_command_line's second form): for a program's main.
  bool parse(const Session& s, const std::string& description, const std::function<void(CLI::App&)>& add_options) const;
};

// Refuses, before a run, an output file that cannot be written at its end: a directory, or a file
// in a folder that does not exist (UsageError "<flag> <path>: ..."). Empty: nothing asked.
void check_output_file(const std::string& flag, const std::string& path);

// The whole number in `text`, the value of the environment variable (or setting) `name`, within
// [min, max]; otherwise sp::Error "<name>='<text>': expected <what> from <min> to <max>".
long parse_bounded_integer(const std::string& name, const std::string& text, long min, long max,
                           const std::string& what);

// Splits "a,b,c" on commas; an empty item is a UsageError naming `what`.
std::vector<std::string> split_list(const std::string& text, const std::string& what);
// Splits "a,b,c"; "all" expands to all_values. Unknown items are a UsageError naming them.
std::vector<std::string> parse_choice_list(const std::string& text, const std::vector<std::string>& all_values,
                                           const std::string& what);

}  // namespace sp
