// Shared by the libFuzzer targets of tests/fuzz.
//
// The oracle of every target: a reader given any bytes either succeeds or throws sp::Error (the
// project's one-line error). Anything else is a finding and must reach libFuzzer as a crash:
// another exception type (std::bad_variant_access, std::bad_alloc, std::out_of_range ...) escapes
// LLVMFuzzerTestOneInput and aborts; memory errors and undefined behaviour are caught by ASan and
// UBSan; an allocation above -malloc_limit_mb is reported by libFuzzer itself.
#pragma once

#include <fcntl.h>
#include <sanitizer/common_interface_defs.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/run/error.hpp"
#include "core/trace/h5_open.hpp"

namespace sp::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Readers that take a path get the input through a file on tmpfs (/dev/shm when present), one per
// process so parallel campaigns (-jobs=N) do not share it. Rewritten for every input.
class InputFile {
 public:
  explicit InputFile(const char* suffix) {
    const char* dir = std::getenv("SCALEPROBE_FUZZ_TMPDIR");
    if (!dir || !*dir) dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    path_ = std::string(dir) + "/scaleprobe-fuzz-" + std::to_string(getpid()) + suffix;
  }
  ~InputFile() { std::remove(path_.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& write(const std::uint8_t* data, std::size_t size) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
      std::perror(path_.c_str());
      std::abort();  // the harness, not the reader, failed: stop the campaign
    }
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// An input the reader refused with its one-line error: fine. SCALEPROBE_FUZZ_VERBOSE=1 prints
// the message (to check that a seed is accepted, or why not).
inline void refused(const std::exception& e) {
  static const bool verbose = std::getenv("SCALEPROBE_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "refused: %s\n", e.what());
}

// The scaffold of a target whose reader takes a path: writes the input to file and returns
// read(path), or nothing when the reader refused it with sp::Error (refused).
template <typename Read>
auto read_input_file(InputFile& file, const std::uint8_t* data, std::size_t size, const Read& read)
    -> std::optional<std::decay_t<decltype(read(file.path()))>> {
  const std::string& path = file.write(data, size);
  try {
    return read(path);
  } catch (const Error& e) {
    refused(e);
    return std::nullopt;
  }
}

// Files without a digest are read in an isolated child (core/trace/h5_open.hpp), where libhdf5 may
// crash: that is expected and not a finding, only the parent's survival is. The child inherits
// libFuzzer's and the sanitizers' crash reporting, which would write a crash-/oom- artifact of the
// input and fail the run: there the reporting is switched off (a crash is only the child's signal
// or exit status, which the parent turns into sp::Error), with limits well inside libFuzzer's
// -timeout (10 s) and -malloc_limit_mb (run_fuzz.sh).
inline void quiet_isolated_child() {
  __sanitizer_set_death_callback(nullptr);  // libFuzzer's: it writes the crash artifact
  ::signal(SIGTRAP, SIG_DFL);               // the crash signals are reset by core/trace/h5_open.cpp
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) ::dup2(null, 1), ::dup2(null, 2);
}
inline void isolate_quietly() {
  static const bool once = (configure_isolated_reads({{3, std::uint64_t{512} << 20}, quiet_isolated_child}), true);
  (void)once;
}

// A finding the sanitizers cannot see (a wrong answer rather than a memory error): print it and
// abort, so libFuzzer keeps the input as a crash.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace sp::fuzz
