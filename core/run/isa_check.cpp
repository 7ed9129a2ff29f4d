// The start-up check of the baseline instruction set (cmake/isa.cmake): a binary built for, say,
// x86-64-v3 on a CPU without AVX2 says so in one line and exits 2, instead of dying of SIGILL in
// the first vectorised loop. It runs from .init_array at priority 101, before every static
// constructor of the program (ld sorts prioritised entries first), and this file is compiled for
// plain x86-64 (core/CMakeLists.txt) so that it can run anywhere. It uses C library calls only:
// an inline C++ library function it instantiated could be merged by the linker with a copy
// compiled for the baseline, which is what must not run yet (tests/unit/isa.sh checks the
// object defines no weak symbol).
// SCALEPROBE_ISA_CHECK_PRETEND_MISSING=<feature> makes the check treat that feature as absent (the
// test tests/unit/isa_check.sh).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/run/build_info.hpp"

namespace {

bool missing(const char* feature, bool cpu_has) {
  const char* pretend = std::getenv("SCALEPROBE_ISA_CHECK_PRETEND_MISSING");
  return !cpu_has || (pretend != nullptr && std::strcmp(pretend, feature) == 0);
}

// glibc passes (argc, argv, envp) to .init_array functions.
__attribute__((constructor(101))) void check_isa(int argc, char** argv, char**) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  char lacks[256] = "";
#define F(feature)                                                                         \
  if (missing(feature, __builtin_cpu_supports(feature))) {                                 \
    if (lacks[0] != '\0') std::strncat(lacks, " ", sizeof lacks - std::strlen(lacks) - 1); \
    std::strncat(lacks, feature, sizeof lacks - std::strlen(lacks) - 1);                   \
  }
  SP_ISA_FEATURE_CHECKS
#undef F
  if (lacks[0] == '\0') return;
  const char* name = argc > 0 && argv != nullptr && argv[0] != nullptr ? argv[0] : "scaleprobe";
  if (const char* slash = std::strrchr(name, '/')) name = slash + 1;
  std::fprintf(stderr,
               "%s: error: this binary was built for %s (needs %s) and this CPU lacks %s: rebuild on or for it "
               "(cmake -DSCALEPROBE_ISA=<an older level, e.g. x86-64-v2>, or the native preset on that machine)\n",
               name, sp::build_info::isa_baseline, sp::build_info::isa_features, lacks);
  std::_Exit(2);
#else
  (void)argc;
  (void)argv;
#endif
}

}  // namespace
