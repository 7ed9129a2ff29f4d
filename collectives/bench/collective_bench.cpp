#include "collectives/bench/collective_bench.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>

#include "collectives/bench/allreduce_report.hpp"
#include "collectives/transports/timing_only.hpp"
#include "core/run/log.hpp"
#include "core/run/sizes.hpp"

namespace sp::coll {

int run_collective_sweep(Session& s, const SweepOptions& o, Sweep& w, const std::string& program) {
  const Collective collective = w.collective;
  const CollectiveInfo& ci = info(collective);
  Backends backends = o.backend.make(s.comm);
  Provenance prov = collect_provenance(s);
  add_backend_provenance(prov, backends, s.comm);
  CopyBandwidth local_bw;
  const CopyBandwidth bw = probe_copy_bandwidth(w, s, prov, &local_bw);
  // A device backend's calls are timed on its stream as well (CUDA events): a second phase.
  // The trace's kind and timed phase: "allreduce" in allreduce traces (as they always were),
  // "collective" in the others.
  const std::string kind = collective == Collective::allreduce ? "allreduce" : "collective";
  std::vector<std::pair<std::string, std::string>> phases{{kind, fmt::format("one {} call", ci.name)}};
  if (backends.backend().on_device())
    phases.emplace_back(kind + "_on_device", "the same call on the device's clock (CUDA events on the rank's stream)");
  BenchmarkRun bench(s, o.run, program, kind, prov, phases, phases.size() > 1 ? 1 : -1);
  TraceWriter& trace = bench.trace();
  log::info("{} sizes x {} dtype(s) x {} placement(s) x {} algorithm(s); trace {}", w.message_bytes.size(),
            w.dtypes.size(), w.placements.size(), w.algorithms.size(), trace.final_path().string());
  set_sweep_attributes(trace, w, o, s, bw);
  SummaryRows<AllreduceRow> summary{allreduce_columns(collective), {}};
  print_timing_only_rule(s, bench.private_bytes());
  print_allreduce_header(s, o, prov, bw, summary.columns, program);

  Workspace ws;
  // The zero-copy placement's cases hold at most three buffers of the largest size (verification).
  // (Only allreduce has node-local algorithms so far.)
  const std::uint64_t largest = *std::max_element(w.message_bytes.begin(), w.message_bytes.end());
  if (collective == Collective::allreduce)
    attach_node_segment(backends, ws, s.comm, w.algorithms, o.algorithms,
                        checked_product(3, largest + 64, "the node segment's arena"));
  std::map<std::tuple<std::uint64_t, std::string, bool>, double> mpi_time;
  for (std::size_t k = 0; k < w.message_bytes.size(); ++k)
    for (const std::string& dt : w.dtypes)
      for (bool in_place : w.placements)
        for (const std::string& an : w.algorithms) {
          const Dtype d = parse_dtype(dt);
          const Algorithm& a = find_algorithm(an, collective);
          CaseSpec c{&a,
                     d,
                     parse_op(o.op),
                     in_place || ci.one_buffer,
                     usable_count(collective, w.message_bytes[k] / size_of(d), s.size),
                     w.chunk_bytes,
                     w.root,
                     w.imbalance};
          const int iters = o.run.iters > 0 ? o.run.iters : auto_iters(c.bytes());
          const int warmup = o.run.warmup >= 0 ? o.run.warmup : auto_warmup(iters);
          // Simulated: past the private limit, shared buffers and no verification (timing_only.hpp).
          const Backends::CaseTransport t =
              backends.for_case(a, case_memory_bytes(a, c.bytes(), c.chunk_bytes), bench.private_bytes());
          const std::unique_ptr<BenchCase> one = make_case(c, s.comm, *t, ws);
          const std::string label =
              fmt::format("{} {} {} {} B {}", an, dt, o.op, c.bytes(), c.in_place ? "in place" : "out of place");
          log::debug("case {}: {}, {} iterations", summary.table.rows(), label, iters);
          const CaseResult r =
              bench.run_case(*one, static_cast<std::int64_t>(summary.table.rows()), iters, warmup, label);
          auto key = std::make_tuple(w.message_bytes[k], dt, in_place);
          if (an == "mpi") mpi_time[key] = r.stats.mean.mean;
          const double vs = mpi_time.count(key) && mpi_time[key] > 0 ? r.stats.mean.mean / mpi_time[key] : std::nan("");
          summary.add(s, {c, w.nominal_bytes[k], o.run.sync, vs, ci.busbw_factor(s.size), r});
        }
  return bench.finish({"summary", "one row per benchmark case", &summary.table}, {},
                      "every timed iteration of every rank", sweep_ranks_row(local_bw));
}

}  // namespace sp::coll
