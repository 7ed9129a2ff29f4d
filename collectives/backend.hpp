// --backend: which transport the schedules run on (allreduce_perf, bucket_sweep). MPI is always
// there as well: the harness times and checks with it, and MPI_Allreduce stays every backend's
// reference, so one run compares a library's own allreduce and our schedules on it with MPI's.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>

#include "core/cli_fwd.hpp"
#include "collectives/allreduce.hpp"
#include "core/provenance.hpp"

namespace sp::coll {

struct Backends {
  std::unique_ptr<Transport> mpi;
  std::unique_ptr<Transport> chosen;  // null when the backend is MPI itself
  Transport& backend() { return chosen ? *chosen : *mpi; }
  Transport& for_algorithm(const Algorithm& a) { return transport_for(a, *mpi, backend()); }
};

struct BackendOption {
  std::string name = "mpi";
  void add_to(CLI::App& app);
  // Collective over comm: connects the chosen library's ranks (Gloo: TCP pairs, through MPI).
  Backends make(MPI_Comm comm) const;
  // -a: a comma list of the algorithms this backend runs, "all" expanding to them; one that
  // exists only on another backend is a UsageError naming the --backend it needs.
  std::vector<std::string> parse_algorithms(const std::string& text) const;
};

// Records the backend in provenance ("backend", "backend_library").
void add_backend_provenance(Provenance& prov, Backends& b);

}  // namespace sp::coll
