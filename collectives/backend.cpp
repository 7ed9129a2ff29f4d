#include "collectives/backend.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/options.hpp"
#include "core/program.hpp"

namespace sp::coll {

void BackendOption::add_to(CLI::App& app) {
  std::string choices;
  for (const TransportKind& t : transports()) choices += fmt::format("; {}: {}", t.name, t.description);
  app.add_option("--backend", name, "communication library the schedules (and its own allreduce) run on" + choices)
      ->check(CLI::IsMember(transport_names()))
      ->capture_default_str();
}

std::vector<std::string> BackendOption::parse_algorithms(const std::string& text) const {
  for (const std::string& item : split_list(text, "algorithm list"))
    for (const Algorithm& a : algorithms())
      if (a.name == item && !a.offered_with(name))
        throw UsageError(fmt::format("algorithm '{}' is {}'s own allreduce: it needs --backend {}", item, a.transport,
                                     a.transport));
  return parse_choice_list(text, algorithm_names(name), "algorithm");
}

Backends BackendOption::make(MPI_Comm comm) const {
  Backends b;
  b.mpi = make_mpi_transport(comm);
  if (name != "mpi") b.chosen = find_transport(name).make(comm);
  return b;
}

void add_backend_provenance(Provenance& prov, Backends& b) {
  prov.add("backend", std::string(b.backend().name()));
  prov.add("backend_library", b.backend().describe());
}

}  // namespace sp::coll
