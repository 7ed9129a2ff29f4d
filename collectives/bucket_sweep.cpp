// bucket_sweep: the DDP bucket_cap_mb question, communication only. A model's gradient layout
// is packed into buckets the way PyTorch DDP packs it, and one iteration = the allreduce of every
// bucket in backward order. For each cap in the sweep (one bucket per tensor ... one buffer) it
// reports per-iteration latency, bucket count and per-bucket times; every sample is traced.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "collectives/allreduce.hpp"
#include "collectives/backend.hpp"
#include "collectives/buckets.hpp"
#include "collectives/harness.hpp"
#include "core/cache_flush.hpp"
#include "core/json_report.hpp"
#include "core/log.hpp"
#include "core/options.hpp"
#include "core/program.hpp"
#include "core/provenance.hpp"
#include "core/samples.hpp"
#include "core/sizes.hpp"
#include "core/trace.hpp"

namespace {

using namespace sp;
using namespace sp::coll;

constexpr std::size_t kBucketChunkBytes = 1 << 20;  // pipelining segment of ring and tree

struct Case {
  const Algorithm* algorithm;
  BucketCap cap;
  std::vector<Bucket> buckets;
};

// One iteration: every bucket's allreduce, in place, in backward order. Samples are recorded
// only when log is non-null (warm-up and verification pass null).
PhaseSample run_iteration(const Case& c, void* grads, Dtype dt, Transport& transport, Workspace& ws, SampleLog* log,
                   std::int64_t case_id, std::int64_t iter, std::vector<double>* bucket_time) {
  PhaseTimer whole, one;
  whole.start();
  auto* base = static_cast<std::byte*>(grads);
  for (std::size_t b = 0; b < c.buckets.size(); ++b) {
    void* p = base + c.buckets[b].offset * size_of(dt);
    one.start();
    c.algorithm->run({p, p, c.buckets[b].numel, dt, Op::sum, &transport, &ws, kBucketChunkBytes});
    transport.synchronize();  // a device transport's bucket has finished on the device, not only been queued
    PhaseSample s = one.stop();
    if (log) {
      log->add(case_id, iter, 1, static_cast<std::int64_t>(b), s);
      (*bucket_time)[b] += s.wall_s;
    }
  }
  PhaseSample total = whole.stop();
  if (log) log->add(case_id, iter, 0, -1, total);
  return total;
}

int run(Session& s) {
  RunOptions ro;
  BackendOption backend;
  std::string layout_name = "resnet50", caps_text = "tensor,1,5,25,100,all", algos_text = "ring", dtype_text = "f32";
  bool print_buckets = false;
  CLI::App app{"bucket_sweep: per-iteration gradient allreduce latency vs DDP bucket cap", "bucket_sweep"};
  ro.add_to(app);
  backend.add_to(app);
  app.add_option("-l,--layout", layout_name, "gradient layout: resnet50, bert-base, or a file ('name 64x3x7x7' per line)")
      ->capture_default_str();
  app.add_option("-c,--caps", caps_text, "comma list of bucket caps in MiB, 'tensor' (one per tensor), 'all' (one buffer)")
      ->capture_default_str();
  app.add_option("-a,--algorithms", algos_text, "comma list of allreduce algorithms or 'all'")->capture_default_str();
  app.add_option("-d,--dtype", dtype_text, "gradient element type")->check(CLI::IsMember({"f32", "f64", "bf16"}))
      ->capture_default_str();
  app.add_flag("--print-buckets", print_buckets, "print every bucket's tensor indices (forward order) on stdout");
  if (!parse_command_line(app, s)) return 0;
  ro.apply_log_level();
  if (!ro.json.empty()) check_json_path(ro.json);

  GradientLayout layout;
  std::vector<BucketCap> caps;
  try {
    layout = load_layout(layout_name);
    if (ro.weak()) layout = layout.scaled(static_cast<std::size_t>(s.size));
    for (const std::string& c : split_list(caps_text, "bucket cap list")) caps.push_back(parse_bucket_cap(c));
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  std::vector<std::string> algos = backend.parse_algorithms(algos_text);
  Dtype dt = parse_dtype(dtype_text);
  const std::size_t n = layout.total_numel();
  // The gradients, their pattern and the expected result (3 x the layout's bytes) and the
  // workspace must fit in this rank's share of the node's memory: refused before allocating.
  {
    const std::uint64_t budget = rank_memory_budget(s.comm);
    std::uint64_t layout_bytes = 0, need = 0;
    try {
      layout_bytes = checked_product(n, size_of(dt), "layout bytes");
      need = case_memory_bytes(layout_bytes, kBucketChunkBytes);
    } catch (const Error&) {
      need = UINT64_MAX;
    }
    if (need > budget)
      throw UsageError(fmt::format("layout {}{}: {} elements of {} need {} per rank (3 x the gradients + workspace), more "
                                   "than the {} this node's memory leaves each of its ranks", layout.name,
                                   ro.weak() ? fmt::format(" x {} ranks", s.size) : "", n, dtype_text,
                                   format_size(need), format_size(budget)));
  }
  const int iters = ro.iters > 0 ? ro.iters : 10;
  const int warmup = ro.warmup >= 0 ? ro.warmup : 2;

  Backends backends = backend.make(s.comm);
  Provenance prov = collect_provenance(s);
  add_backend_provenance(prov, backends, s.comm);
  TraceWriter trace(s, ro.trace_path(prov), "bucket_sweep", prov);
  log::info("{} algorithm(s) x {} cap(s), {} iterations each; trace {}", algos.size(), caps.size(), iters,
            trace.final_path().string());
  trace.set_attribute("layout", layout.name);
  trace.set_attribute("scaling", ro.scaling);
  trace.set_attribute("layout_scale", static_cast<std::int64_t>(ro.weak() ? s.size : 1));
  trace.set_attribute("off_cache", static_cast<std::int64_t>(ro.off_cache));
  trace.set_attribute("busbw_factor", allreduce_busbw_factor(s.size));
  if (s.rank == 0) {
    fmt::print("# bucket_sweep: layout {}{} ({} tensors, {} parameters, {} per iteration as {}), {} ranks\n",
               layout.name, ro.weak() ? fmt::format(" x {} ranks (weak scaling)", s.size) : "", layout.tensors.size(), n,
               format_size(n * size_of(dt)), dtype_text, s.size);
    fmt::print("# backend: {} ({})\n", *prov.find("backend"), *prov.find("backend_library"));
    fmt::print("# DDP packing: reverse order, tensors never split, first bucket capped at 1 MiB, later ones at the cap\n");
    fmt::print("# iteration = allreduce of every bucket in turn (communication only; no compute to overlap)\n");
    fmt::print("# times per iteration; busbw = (bytes per iteration / t_mean) * 2(n-1)/n; sync: {}; off-cache: {}\n",
               ro.sync, ro.off_cache ? "yes (gradients evicted from the cache before each iteration)" : "no");
    fmt::print("#{:>11} {:>8} {:>7} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>8} {:>6} {:>6}\n", "algorithm", "cap(MiB)",
               "buckets", "t_min(ms)", "t_mean(ms)", "t_max(ms)", "p50(ms)", "p99(ms)", "bucket(ms)", "busbw", "cpu/w", "#wrong");
    std::fflush(stdout);
  }

  // The verification's expected result depends only on the layout, dtype and rank count: once.
  std::vector<std::byte> want(std::max<std::size_t>(n * size_of(dt), 1));
  fill_expected(want.data(), n, dt, Op::sum, s.size);
  std::uint64_t evicted_bytes = 0;
  SampleLog samples({{"iteration", "allreduce of every bucket, in backward order"},
                     {"bucket_allreduce", "one bucket's allreduce"}});
  Table summary, bucket_table;
  Workspace ws;
  attach_node_segment(backends, ws, s.comm, algos, algos_text, 2 * (std::max<std::size_t>(n * size_of(dt), 1) + 64));  // grads, pattern
  long long total_wrong = 0;
  for (const std::string& an : algos) {
    const Algorithm& algorithm = find_algorithm(an);
    Transport& transport = backends.for_algorithm(algorithm);
    // Every iteration, timed or not, starts from the verification pattern (copied back untimed),
    // so the timed allreduces reduce non-zero data and repeated in-place sums never grow. The
    // gradients and the pattern live in the algorithm's transport's memory (host or device).
    const std::size_t grad_bytes = std::max<std::size_t>(n * size_of(dt), 1);
    const TransportBuffer pattern = filled_buffer(transport, grad_bytes, [&](std::byte* p) {
      fill_pattern(p, n, dt, s.rank, s.size);
    });
    TransportBuffer grads = transport.allocate(grad_bytes);
    auto reset_grads = [&] {
      transport.copy(grads.data(), pattern.data(), grad_bytes);
      transport.synchronize();
    };
    for (const BucketCap& cap : caps) {
      std::int64_t id = static_cast<std::int64_t>(summary.rows());
      Case c{&algorithm, cap, pack_buckets(layout, size_of(dt), cap)};
      log::debug("case {}: {} cap {} ({} buckets)", id, an, cap.label, c.buckets.size());
      for (int i = 0; i < warmup; ++i) {
        reset_grads();
        run_iteration(c, grads.data(), dt, transport, ws, nullptr, id, i, nullptr);
      }
      std::vector<double> bucket_time(c.buckets.size(), 0.0);
      TimedRun r;
      SP_MPI_CHECK(MPI_Barrier(s.comm));
      double rq0 = thread_runqueue_wait_seconds();
      for (int i = 0; i < iters; ++i) {
        reset_grads();  // before the eviction, so --off-cache still starts every iteration cold
        if (ro.off_cache && !transport.on_device()) {
          flush_from_cache(grads.data(), grads.size());
          evicted_bytes += grads.size();
        }
        if (ro.barrier()) SP_MPI_CHECK(MPI_Barrier(s.comm));
        r.samples.push_back(run_iteration(c, grads.data(), dt, transport, ws, &samples, id, i, &bucket_time));
      }
      double rq1 = thread_runqueue_wait_seconds();
      r.runqueue_wait_s = rq0 >= 0 && rq1 >= 0 ? rq1 - rq0 : -1;
      // Verification: pattern in, one iteration, exact expected result out.
      reset_grads();
      run_iteration(c, grads.data(), dt, transport, ws, nullptr, id, -1, nullptr);
      TransportBuffer want_on_device;  // the expected result where a device transport compares
      if (transport.on_device()) {
        want_on_device = transport.allocate(grad_bytes);
        transport.from_host(want_on_device.data(), want.data(), grad_bytes);
      }
      const void* expected = transport.on_device() ? want_on_device.data() : want.data();
      long long wrong = static_cast<long long>(transport.count_mismatches(grads.data(), expected, n, dt));
      SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, s.comm));
      total_wrong += wrong;

      CaseStats st = case_stats(r, s.comm);
      for (double& t : bucket_time) t /= iters;
      std::vector<double> bucket_mean(bucket_time.size());
      if (!bucket_time.empty())
        SP_MPI_CHECK(MPI_Allreduce(bucket_time.data(), bucket_mean.data(), static_cast<int>(bucket_time.size()),
                                   MPI_DOUBLE, MPI_SUM, s.comm));
      double bytes = double(n * size_of(dt));
      double busbw = st.mean.mean > 0 ? bytes / st.mean.mean / 1e9 * allreduce_busbw_factor(s.size) : 0;
      summary.ints("case", "", "case id (samples.case refers to it)").push_back(id);
      summary.strings("algorithm", "allreduce algorithm").emplace_back(an);
      summary.strings("cap", "bucket cap: MiB, 'tensor' or 'all'").push_back(cap.label);
      summary.ints("cap_bytes", "B", "cap of buckets after the first").push_back(
          static_cast<std::int64_t>(std::min<std::size_t>(cap.cap_bytes, INT64_MAX)));
      summary.ints("first_cap_bytes", "B", "cap of the first bucket").push_back(
          static_cast<std::int64_t>(std::min<std::size_t>(cap.first_bytes, INT64_MAX)));
      summary.ints("buckets", "", "number of buckets").push_back(static_cast<std::int64_t>(c.buckets.size()));
      summary.ints("bytes", "B", "gradient bytes per iteration").push_back(static_cast<std::int64_t>(bytes));
      summary.strings("dtype", "gradient element type").push_back(dtype_text);
      summary.ints("iters", "", "timed iterations").push_back(iters);
      append_timing_columns(summary, st, "iteration");
      summary.reals("busbw_GBps", "GB/s", "bytes / t_mean * 2(n-1)/n").push_back(busbw);
      summary.ints("wrong", "", "elements wrong in verification, summed over ranks").push_back(wrong);
      for (std::size_t b = 0; b < c.buckets.size(); ++b) {
        bucket_table.ints("case", "", "summary row").push_back(id);
        bucket_table.ints("bucket", "", "bucket index in backward order").push_back(static_cast<std::int64_t>(b));
        bucket_table.ints("bytes", "B", "bucket size").push_back(static_cast<std::int64_t>(c.buckets[b].numel * size_of(dt)));
        bucket_table.ints("tensors", "", "tensors in the bucket").push_back(static_cast<std::int64_t>(c.buckets[b].tensors.size()));
        bucket_table.strings("first_tensor", "first tensor packed (last in forward order)")
            .push_back(layout.tensors[c.buckets[b].tensors.front()].name);
        bucket_table.reals("t_mean_us", "us", "mean over ranks and iterations").push_back(bucket_mean[b] / s.size * 1e6);
      }
      if (s.rank == 0) {
        double mean_bucket = c.buckets.empty() ? 0 : st.mean.mean / double(c.buckets.size());
        fmt::print(" {:>11} {:>8} {:>7} {:>11.3f} {:>11.3f} {:>11.3f} {:>11.3f} {:>11.3f} {:>11.4f} {:>8.3f} {:>6.2f} {:>6}\n",
                   an, cap.label, c.buckets.size(), st.mean.min * 1e3, st.mean.mean * 1e3, st.mean.max * 1e3,
                   st.iteration.median * 1e3, st.iteration.p99 * 1e3, mean_bucket * 1e3, busbw,
                   st.mean.mean > 0 ? st.cpu_mean_s / st.mean.mean : 0, wrong);
        if (print_buckets)
          for (std::size_t b = 0; b < c.buckets.size(); ++b)
            fmt::print("# bucket cap={} {}: bytes={} tensors={}\n", cap.label, b,
                       c.buckets[b].numel * size_of(dt), fmt::join(c.buckets[b].tensors, ","));
        std::fflush(stdout);
      }
    }
  }
  Table layout_table;
  for (const TensorSpec& t : layout.tensors) {
    layout_table.strings("name", "parameter tensor, forward order").push_back(t.name);
    layout_table.ints("numel", "", "elements").push_back(static_cast<std::int64_t>(t.numel));
  }
  trace.write_table("summary", summary, TableScope::shared, "one row per (algorithm, bucket cap)");
  trace.write_table("buckets", bucket_table, TableScope::shared, "one row per bucket of every case");
  trace.write_table("layout", layout_table, TableScope::shared, "the gradient layout swept");
  trace.write_table("phases", samples.phases_table(), TableScope::shared, "phase ids used in samples");
  trace.write_table("samples", samples.samples_table(), TableScope::per_rank, "every timed iteration and bucket of every rank");
  trace.write_table("ranks", rank_map_row(), TableScope::per_rank, "rank -> host -> core map");
  trace.set_attribute("wrong_elements", static_cast<std::int64_t>(total_wrong));
  trace.set_attribute("off_cache_evicted_bytes", static_cast<std::int64_t>(evicted_bytes));
  auto path = trace.commit();
  if (s.rank == 0) fmt::print("# trace: {}\n", path.string());
  if (total_wrong > 0) {
    if (s.rank == 0) std::fprintf(stderr, "bucket_sweep: error: verification failed: %lld wrong element(s)\n", total_wrong);
    return 1;
  }
  if (s.rank == 0 && !ro.json.empty())
    write_json_report(ro.json, "bucket_sweep", prov, path, {{"summary", &summary}, {"buckets", &bucket_table}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return sp::run_program(argc, argv, "bucket_sweep", MPI_THREAD_SINGLE, run); }
