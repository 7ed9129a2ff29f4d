// trace_check FILE...: validate scaleprobe trace files. Prints one line per file; exits 1 if any
// file is missing, corrupt, truncated, of an unknown schema version or incomplete.
#include <cstdio>

#include "core/error.hpp"
#include "core/trace.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::fprintf(argc < 2 ? stderr : stdout, "usage: trace_check TRACE.h5 [TRACE.h5 ...]\n");
    return argc < 2 ? 2 : 0;
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
