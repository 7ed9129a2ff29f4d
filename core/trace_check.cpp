// trace_check FILE...: validate scaleprobe trace files. Prints one line per file; exits 1 if any
// file is missing, corrupt, truncated, of an unknown schema version or incomplete.
// trace_check --attribute NAME FILE: validate one file and print its root attribute NAME
// (what job scripts read, e.g. a trainer's interrupted_by_signal; an empty line if absent).
#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "core/trace.hpp"

int main(int argc, char** argv) {
  const std::string first = argc > 1 ? argv[1] : "";
  if (argc < 2 || first == "--help" || first == "-h") {
    std::fprintf(argc < 2 ? stderr : stdout,
                 "usage: trace_check TRACE.h5 [TRACE.h5 ...]\n       trace_check --attribute NAME TRACE.h5\n");
    return argc < 2 ? 2 : 0;
  }
  if (first == "--attribute") {
    if (argc != 4) {
      std::fprintf(stderr, "trace_check: error: --attribute takes a NAME and one TRACE.h5\n");
      return 2;
    }
    try {
      sp::TraceReader r(argv[3]);
      std::printf("%s\n", r.root_attribute(argv[2]).c_str());
      return 0;
    } catch (const sp::Error& e) {
      std::fprintf(stderr, "trace_check: error: %s\n", e.what());
      return 1;
    }
  }
  int bad = 0;
  for (int i = 1; i < argc; ++i) {
    try {
      sp::TraceReader r(argv[i]);
      std::string tables;
      for (auto& t : r.tables()) tables += fmt::format(" {}={}", t.name, t.rows);
      std::printf("ok: %s kind=%s ranks=%lld%s\n", argv[i], r.kind().c_str(),
                  static_cast<long long>(r.nranks()), tables.c_str());
    } catch (const sp::Error& e) {
      std::fprintf(stderr, "trace_check: error: %s\n", e.what());
      ++bad;
    }
  }
  return bad ? 1 : 0;
}
