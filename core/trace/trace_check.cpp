// trace_check FILE...: validate scaleprobe trace files. Prints one line per file; exits 1 if any
// file is missing, corrupt (a whole-file digest that does not match, a failed Fletcher32
// checksum), truncated, of an unknown schema version or incomplete. The digest is checked before
// libhdf5 opens the file, then every column is read, so every checksummed chunk is verified too.
// Older traces have no digest (schema version < 3) or no checksums (version 1), which the line
// says (not an error); they are read in an isolated child first (core/trace/h5_open.hpp), so a file on
// which libhdf5 crashes is one line "unreadable: the HDF5 library crashed on it (signal N, ...)"
// and the other files are still checked.
// trace_check --attribute NAME FILE: validate one file and print its root attribute NAME
// (what job scripts read, e.g. a trainer's interrupted_by_signal; an empty line if absent).
// Whatever goes wrong (even out of memory on a crafted file) is one line "trace_check: error: ...".
#include <cstdio>
#include <exception>
#include <string>

#include "core/run/error.hpp"
#include "core/run/program.hpp"
#include "core/trace/trace.hpp"

namespace {

void report(const std::string& message) { std::fprintf(stderr, "trace_check: error: %s\n", message.c_str()); }

// Runs check(); on any exception prints its one line and returns false.
template <typename F>
bool guarded(const F& check) {
  try {
    check();
    return true;
  } catch (const std::exception& e) {
    report(sp::one_line_message(e));
  } catch (...) {
    report(sp::unknown_exception_message());
  }
  return false;
}

std::string checksum_note(const sp::TraceReader& r, std::size_t checked) {
  const std::string digest = r.digest_verified() ? " digest=crc32 verified" : " no digest (older format)";
  if (r.schema_version() < 2) return fmt::format("{} no checksum (schema version {})", digest, r.schema_version());
  return fmt::format("{} checksums={} verified", digest, checked);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string first = argc > 1 ? argv[1] : "";
  if (argc < 2 || first == "--help" || first == "-h") {
    std::fprintf(argc < 2 ? stderr : stdout,
                 "usage: trace_check TRACE.h5 [TRACE.h5 ...]\n       trace_check --attribute NAME TRACE.h5\n");
    return argc < 2 ? 2 : 0;
  }
  if (first == "--version") {
    std::printf("%s\n", sp::version_text("trace_check").c_str());
    return 0;
  }
  if (first == "--attribute") {
    if (argc != 4) {
      report("--attribute takes a NAME and one TRACE.h5");
      return 2;
    }
    return guarded([&] {
      sp::TraceReader r(argv[3]);
      std::printf("%s\n", r.root_attribute(argv[2]).c_str());
    })
               ? 0
               : 1;
  }
  int bad = 0;
  for (int i = 1; i < argc; ++i) {
    const bool ok = guarded([&] {
      sp::TraceReader r(argv[i]);
      const std::size_t checked = r.verify_checksums();
      std::string tables = " tables:";  // labelled as scaleprobe-analyze check's: one table is named "ranks"
      for (auto& t : r.tables()) tables += fmt::format(" {}={}", t.name, t.rows);
      std::printf("ok: %s kind=%s ranks=%lld%s%s\n", argv[i], r.kind().c_str(), static_cast<long long>(r.nranks()),
                  tables.c_str(), checksum_note(r, checked).c_str());
    });
    if (!ok) ++bad;
  }
  return bad ? 1 : 0;
}
