// A tiny program for program_errors.sh: run_program around a body that throws what argv[1] names
// ("bad_alloc", "variant", "length", "range", "filesystem", "int", "usage", "none") on the rank
// argv[2] names (default 0); the other ranks wait in a barrier, as in a collective.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "core/run/program.hpp"

namespace {

[[noreturn]] void throw_kind(const std::string& kind) {
  if (kind == "bad_alloc") throw std::bad_alloc();
  if (kind == "variant") {
    std::variant<int, double> v = 1.5;
    (void)std::get<int>(v);
  }
  if (kind == "length") {
    std::vector<int> v;
    v.reserve(v.max_size() + 1);
  }
  if (kind == "range") (void)std::vector<int>{}.at(3);
  if (kind == "filesystem") std::filesystem::rename("/nonexistent/a", "/nonexistent/b");
  if (kind == "multiline") throw std::runtime_error("first line\nsecond line");
  if (kind == "usage") throw sp::UsageError("--flag out of range");
  throw 42;  // not a std::exception at all
}

}  // namespace

int main(int argc, char** argv) {
  return sp::run_program(argc, argv, "program_error_probe", MPI_THREAD_SINGLE, [&](sp::Session& s) {
    const std::string kind = argc > 1 ? argv[1] : "none";
    const int thrower = argc > 2 ? std::stoi(argv[2]) : 0;
    if (kind != "none" && s.rank == thrower) throw_kind(kind);
    SP_MPI_CHECK(MPI_Barrier(s.comm));
    return 0;
  });
}
