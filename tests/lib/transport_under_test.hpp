// The MPI tests' world and the transport they test: SP_TRANSPORT names it (default mpi; CTest runs
// gloo and nccl too), made over MPI_COMM_WORLD on first use (after MPI_Init; collective).
#pragma once

#include <mpi.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "collectives/transports/transport.hpp"
#include "tests/lib/optional_part.hpp"

namespace sp::test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

inline std::string transport_name() {
  const char* name = std::getenv("SP_TRANSPORT");
  return name && *name ? name : "mpi";
}

// Whether this build has the transport (Gloo and NCCL only where configure found the library).
inline bool transport_built() {
  for (const std::string& t : coll::transport_names())
    if (t == transport_name()) return true;
  return false;
}

inline coll::Transport& world_transport() {
  static const std::unique_ptr<coll::Transport> world = coll::find_transport(transport_name()).make(MPI_COMM_WORLD);
  return *world;
}

// A transport this build lacks shows as Not Run (an optional part), not Passed. The test returns
// after it when skipped or failed: `if (IsSkipped() || HasFailure()) return;`.
inline void skip_unless_transport_built() {
  if (!transport_built())
    SP_SKIP_OPTIONAL_PART(transport_name(),
                          "this build has no " + transport_name() + " transport (configure found no library)");
}

}  // namespace sp::test
