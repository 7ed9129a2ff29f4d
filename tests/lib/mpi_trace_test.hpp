// What the parallel trace tests (tests/mpi/test_trace*.cpp) share: a Session over MPI_COMM_WORLD
// without run_program, and a temporary directory every rank writes into.
#pragma once
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/run/program.hpp"

namespace sp::test {

inline Session world_session(const std::string& program, std::vector<std::string> argv = {}) {
  Session s;
  MPI_Comm_rank(s.comm, &s.rank);
  MPI_Comm_size(s.comm, &s.size);
  s.program = program;
  s.argv = std::move(argv);
  return s;
}

// A directory shared by all ranks: rank 0 creates it from `prefix` and broadcasts its name.
inline std::string shared_temp_dir(const std::string& prefix) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char buf[256] = {};
  if (rank == 0) {
    std::string d = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    std::snprintf(buf, sizeof buf, "%s", mkdtemp(d.data()));
  }
  MPI_Bcast(buf, sizeof buf, MPI_CHAR, 0, MPI_COMM_WORLD);
  return buf;
}

}  // namespace sp::test
