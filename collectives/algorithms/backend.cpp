#include "collectives/algorithms/backend.hpp"

#include <algorithm>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "collectives/transports/forwarding_transport.hpp"
#include "collectives/transports/timing_only.hpp"
#include "core/run/error.hpp"
#include "core/run/log.hpp"
#include "core/run/options.hpp"
#include "core/run/program.hpp"

namespace sp::coll {

void BackendOption::add_to(CLI::App& app) {
  std::string choices;
  for (const TransportKind& t : transports()) choices += fmt::format("; {}: {}", t.name, t.description);
  app.add_option("--backend", name, "communication library the schedules (and its own allreduce) run on" + choices)
      ->check(CLI::IsMember(transport_names()))
      ->capture_default_str();
}

std::vector<std::string> BackendOption::parse_algorithms(const std::string& text, Collective c) const {
  std::string left_out;  // node-local algorithms 'all' does not run on this backend
  for (const std::string& item : split_list(text, "algorithm list"))
    for (const Algorithm& a : algorithms(c)) {
      if (a.offered_with(name) || (a.name != item && !(item == "all" && a.node_local))) continue;
      if (a.node_local && item == "all")
        left_out += (left_out.empty() ? "" : ", ") + std::string(a.name);
      else if (a.node_local)
        throw UsageError(fmt::format("algorithm '{}' is node-local over host memory: it runs with a host backend ({})",
                                     item, fmt::join(transport_names(/*host_only=*/true), ", ")));
      else
        throw UsageError(fmt::format("algorithm '{}' is {}'s own {}: it needs --backend {}", item, a.transport,
                                     info(c).name, a.transport));
    }
  if (!left_out.empty())
    log::info("-a all with --backend {} leaves out {} (node-local over host memory)", name, left_out);
  return parse_choice_list(text, algorithm_names(name, c),
                           c == Collective::allreduce ? "algorithm" : fmt::format("{} algorithm", info(c).name));
}

Backends BackendOption::make(MPI_Comm comm) const {
  Backends b;
  b.mpi = make_mpi_transport(comm);
  if (name != "mpi") b.chosen = find_transport(name).make(comm);
  return b;
}

namespace {

// The backend with its buffers allocated in the node segment's arena; everything else is the
// backend's, forwarded (the zero-copy placement's cases allocate through it).
class SegmentMemory : public ForwardingTransport {
 public:
  SegmentMemory(Transport& t, NodeSegment& seg) : ForwardingTransport(t), seg_(seg) {}
  TransportBuffer allocate(std::size_t bytes) const override { return seg_.allocate(bytes); }

 private:
  NodeSegment& seg_;
};

}  // namespace

std::unique_ptr<Transport> make_segment_memory(Transport& t, NodeSegment& seg) {
  return std::make_unique<SegmentMemory>(t, seg);
}

Transport& Backends::for_algorithm(const Algorithm& a) {
  if (a.buffers_in_segment) {
    if (!segment_memory) fail("algorithm '{}' needs the node segment (attach_node_segment)", a.name);
    return *segment_memory;
  }
  return transport_for(a, *mpi, backend());
}

bool Backends::timing_only(std::uint64_t rank_bytes, std::uint64_t private_bytes) const {
  return runs_timing_only(rank_bytes, mpi->size(), private_bytes);
}

Backends::CaseTransport Backends::for_case(const Algorithm& a, std::uint64_t rank_bytes, std::uint64_t private_bytes) {
  Transport& t = for_algorithm(a);
  if (!timing_only(rank_bytes, private_bytes)) return {nullptr, &t};
  std::unique_ptr<Transport> shared = make_timing_only(t);
  Transport* p = shared.get();
  return {std::move(shared), p};
}

Backends::Rail::~Rail() {
  transport.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
}

void attach_node_segment(Backends& b, Workspace& ws, MPI_Comm comm, std::vector<std::string>& algorithms,
                         const std::string& algorithms_text, std::size_t arena_bytes, int channels) {
  auto any = [&](auto property) {
    return std::any_of(algorithms.begin(), algorithms.end(),
                       [&](const std::string& a) { return property(find_algorithm(a)); });
  };
  auto one_node_only = [](const Algorithm& a) { return a.node_local && !a.across_nodes; };
  auto equal_nodes_only = [](const Algorithm& a) { return a.across_nodes; };
  if (!any([](const Algorithm& a) { return a.node_local; })) return;
  const NodeLayout layout = node_layout(comm);
  // Drops those the layout excludes that only `all` brought (with a note); named ones are one line.
  const std::vector<std::string> named = split_list(algorithms_text, "algorithm list");
  auto exclude = [&](auto excluded, const std::string& why, const std::string& refusal) {
    std::string dropped, refused;
    std::erase_if(algorithms, [&](const std::string& a) {
      if (!excluded(find_algorithm(a))) return false;
      const bool was_named = std::find(named.begin(), named.end(), a) != named.end();
      (was_named ? refused : dropped) += ((was_named ? refused : dropped).empty() ? "" : ", ") + a;
      return !was_named;
    });
    if (!dropped.empty()) log::info("-a all {} leaves out {}", why, dropped);
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (!refused.empty())  // the same on every rank
      fail_together(comm, rank == 0 ? fmt::format("{} (-a {})", refusal, refused) : std::string(), /*usage=*/true);
  };
  if (layout.nodes > 1)
    exclude(one_node_only, "on ranks of several nodes",
            fmt::format("the shm allreduce runs within one node: these ranks span {} nodes (shared-memory domains and "
                        "node keys); hier spans nodes",
                        layout.nodes));
  if (layout.fewest != layout.most)
    exclude(equal_nodes_only, "on nodes of unequal size",
            fmt::format("the hierarchical allreduce needs the same number of ranks on every node: these ranks span "
                        "{} nodes of {} to {} ranks",
                        layout.nodes, layout.fewest, layout.most));
  if (!any([](const Algorithm& a) { return a.node_local; })) return;
  const bool in_segment = any([](const Algorithm& a) { return a.buffers_in_segment; });
  if (any([](const Algorithm& a) { return a.across_nodes; })) {
    b.rail = std::make_unique<Backends::Rail>();
    b.node = NodeSegment::create(comm, in_segment ? arena_bytes : 0, &b.rail->comm, channels);
    b.rail->transport = find_transport(b.backend().name()).make(b.rail->comm);
  } else {
    b.node = NodeSegment::create(comm, in_segment ? arena_bytes : 0, nullptr, channels);
  }
  ws.attach(b.node.get(), b.rail ? b.rail->transport.get() : nullptr);
  if (in_segment) b.segment_memory = make_segment_memory(b.backend(), *b.node);
}

void add_backend_provenance(Provenance& prov, Backends& b, MPI_Comm comm) {
  prov.add("backend", std::string(b.backend().name()));
  prov.add("nodes", std::to_string(node_count(comm)));
  prov.add("backend_library", b.backend().describe());
}

}  // namespace sp::coll
