// bucket_sweep: the DDP bucket_cap_mb question, communication only. A model's gradient layout
// is packed into buckets the way PyTorch DDP packs it, and one iteration = the allreduce of every
// bucket in backward order. For each cap in the sweep (one bucket per tensor ... one buffer) it
// reports per-iteration latency, bucket count and per-bucket times; every sample is traced.
// The cases and rows: collectives/bench/bucket_bench.hpp; the loop: driver.hpp.
#include <algorithm>

#include "collectives/bench/bucket_bench.hpp"
#include "collectives/bench/sweep.hpp"
#include "collectives/transports/timing_only.hpp"
#include "core/run/log.hpp"

namespace {

using namespace sp;
using namespace sp::coll;

int run(Session& s, BucketSweepOptions& o) {
  BucketSweep w = resolve_bucket_sweep(o, s);
  const GradientLayout& layout = w.layout;
  const Dtype dt = w.dtype;
  const std::size_t n = layout.total_numel();

  Backends backends = o.backend.make(s.comm);
  Provenance prov = collect_provenance(s);
  add_backend_provenance(prov, backends, s.comm);
  BenchmarkRun bench(
      s, o.run, "bucket_sweep", "bucket_sweep", prov,
      {{"iteration", "allreduce of every bucket, in backward order"}, {"bucket_allreduce", "one bucket's allreduce"}});
  log::info("{} algorithm(s) x {} cap(s), {} iterations each; trace {}", w.algorithms.size(), w.caps.size(), w.iters,
            bench.trace().final_path().string());
  set_bucket_sweep_attributes(bench.trace(), w, o.run, s);
  SummaryRows<BucketRow> summary{bucket_columns(), {}};
  print_timing_only_rule(s, bench.private_bytes());
  print_bucket_header(s, o.run, prov, layout, o.dtype, summary.columns);

  // Simulated, past the private limit: shared buffers, no verification (timing_only.hpp).
  const std::size_t layout_bytes = std::max<std::size_t>(n * size_of(dt), 1);
  auto case_bytes = [&](const Algorithm& a) { return case_memory_bytes(a, layout_bytes, kBucketChunkBytes); };
  auto timing_only = [&](const std::string& an) {
    return backends.timing_only(case_bytes(find_algorithm(an)), bench.private_bytes());
  };
  // The verification's expected result depends only on the layout, dtype and rank count: once,
  // unless no case is verified.
  std::vector<std::byte> want;
  if (!std::all_of(w.algorithms.begin(), w.algorithms.end(), timing_only)) {
    want.resize(layout_bytes);
    fill_expected(want.data(), n, dt, Op::sum, s.size);
  }
  Table bucket_table;
  Workspace ws;
  attach_node_segment(backends, ws, s.comm, w.algorithms, o.algorithms, 2 * (layout_bytes + 64));  // grads, pattern
  for (const std::string& an : w.algorithms) {
    const Algorithm& algorithm = find_algorithm(an);
    const Backends::CaseTransport t = backends.for_case(algorithm, case_bytes(algorithm), bench.private_bytes());
    GradientBuffers g(*t, n, dt, s.rank, s.size);
    for (const BucketCap& cap : w.caps) {
      const auto id = static_cast<std::int64_t>(summary.table.rows());
      BucketCase c(algorithm, pack_buckets(layout, size_of(dt), cap), n, dt, g, ws, want, bench.samples(), id);
      log::debug("case {}: {} cap {} ({} buckets)", id, an, cap.label, c.buckets().size());
      CaseResult r = bench.run_case(c, id, w.iters, w.warmup, fmt::format("{} cap {}", an, cap.label));
      add_bucket_rows(bucket_table, id, c, layout, dt, c.bucket_mean_s(s.comm, w.iters));
      summary.add(s, {an, cap, c.buckets().size(), n * size_of(dt), o.dtype, allreduce_busbw_factor(s.size), r});
      if (o.print_buckets && s.rank == 0)
        for (std::size_t b = 0; b < c.buckets().size(); ++b)
          fmt::print("# bucket cap={} {}: bytes={} tensors={}\n", cap.label, b, c.buckets()[b].numel * size_of(dt),
                     fmt::join(c.buckets()[b].tensors, ","));
    }
  }
  Table layout_rows = layout_table(layout);
  return bench.finish({"summary", "one row per (algorithm, bucket cap)", &summary.table},
                      {{"buckets", "one row per bucket of every case", &bucket_table},
                       {"layout", "the gradient layout swept", &layout_rows}},
                      "every timed iteration and bucket of every rank", rank_map_row(),
                      {{"buckets", "", &bucket_table}});
}

}  // namespace

int main(int argc, char** argv) {
  return sp::coll::bench_main(argc, argv, "bucket_sweep",
                              "bucket_sweep: per-iteration gradient allreduce latency vs DDP bucket cap",
                              &sp::coll::BucketSweepOptions::add_to, run);
}
