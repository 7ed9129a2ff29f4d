// GoogleTest side of tests/optional-parts.txt: SP_SKIP_OPTIONAL_PART(part, why) skips the test
// (CTest shows "Not Run": gtest_discover_tests sets SKIP_REGULAR_EXPRESSION "[  SKIPPED ]"; an MPI
// binary, tests/mpi/mpi_gtest_main.cpp, exits 77 when none failed and some skipped), but
// in CI (SCALEPROBE_CI=1) fails it unless the list makes `part` optional here. A part missing
// from the list always fails. The list's path comes from SCALEPROBE_OPTIONAL_PARTS_FILE (a
// compile definition) or the environment variable SCALEPROBE_OPTIONAL_PARTS.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace sp::test {

inline std::string optional_parts_file() {
  if (const char* env = std::getenv("SCALEPROBE_OPTIONAL_PARTS")) return env;
#ifdef SCALEPROBE_OPTIONAL_PARTS_FILE
  return SCALEPROBE_OPTIONAL_PARTS_FILE;
#else
  return "";
#endif
}

// Why skipping for `part` is a failure here; empty when the skip is allowed.
inline std::string optional_part_refusal(const std::string& part) {
  const std::string path = optional_parts_file();
  std::ifstream in(path);
  std::string line, name, when;
  bool found = false;
  while (!found && std::getline(in, line)) {
    std::istringstream fields(line);
    found = (fields >> name >> when) && name[0] != '#' && name == part;
  }
  if (!found) return "'" + part + "' is not an optional part in " + (path.empty() ? "(no list)" : path);
  const char* ci = std::getenv("SCALEPROBE_CI");
  if (ci == nullptr || std::string(ci) != "1" || when == "always") return "";
  const std::size_t eq = when.find('=');
  const char* value = std::getenv(when.substr(0, eq).c_str());
  if (eq != std::string::npos && value != nullptr && when.substr(eq + 1) == value) return "";
  return "skipped in CI for '" + part + "', optional only with " + when;
}

}  // namespace sp::test

#define SP_SKIP_OPTIONAL_PART(part, why)                                     \
  do {                                                                       \
    const std::string sp_refusal_ = ::sp::test::optional_part_refusal(part); \
    if (!sp_refusal_.empty()) FAIL() << sp_refusal_ << ": " << why;          \
    GTEST_SKIP() << "optional part " << part << ": " << why;                 \
  } while (0)
