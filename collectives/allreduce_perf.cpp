// allreduce_perf: latency and bandwidth of every allreduce algorithm over a message-size sweep,
// each checked against a sequential reference after its timed loop. One table row per case on
// stdout (rank 0), every sample in the HDF5 trace. Exit 1 if any element was wrong.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "collectives/allreduce.hpp"
#include "collectives/backend.hpp"
#include "collectives/harness.hpp"
#include "core/json_report.hpp"
#include "core/log.hpp"
#include "core/membw.hpp"
#include "core/topology.hpp"
#include "core/options.hpp"
#include "core/program.hpp"
#include "core/provenance.hpp"
#include "core/samples.hpp"
#include "core/sizes.hpp"
#include "core/trace.hpp"

namespace {

using namespace sp;
using namespace sp::coll;

struct Options {
  SizeOptions sizes;
  RunOptions run;
  BackendOption backend;
  std::string algorithms = "all", dtypes = "f32", op = "sum", placement = "out", chunk = "1M";
  bool membw = true;
  std::string membw_bytes;  // empty: sized from the rank's cache share (core/topology.hpp)
};

// The summary table, one row per case (also what stdout shows).
struct SummaryTable {
  Table t;
  void add(std::int64_t id, const CaseSpec& c, std::uint64_t nominal_bytes, int iters, int warmup, const std::string& sync,
           const CaseStats& st, double vs_mpi, long long wrong, int nranks) {
    double bytes = double(c.bytes());
    double algbw = st.mean.mean > 0 ? bytes / st.mean.mean / 1e9 : 0;
    t.ints("case", "", "case id (samples.case refers to it)").push_back(id);
    t.strings("algorithm", "allreduce algorithm").emplace_back(c.algorithm->name);
    t.strings("dtype", "element type").emplace_back(name(c.dtype));
    t.strings("op", "reduction operator").emplace_back(name(c.op));
    t.strings("placement", "in (in place) or out (out of place)").emplace_back(c.in_place ? "in" : "out");
    t.ints("bytes", "B", "message size").push_back(static_cast<std::int64_t>(c.bytes()));
    t.ints("nominal_bytes", "B", "size from -b/-e/--sizes (per rank under --scaling weak: bytes = nominal x ranks)")
        .push_back(static_cast<std::int64_t>(nominal_bytes));
    t.ints("count", "", "elements").push_back(static_cast<std::int64_t>(c.count));
    t.ints("iters", "", "timed iterations").push_back(iters);
    t.ints("warmup", "", "untimed warm-up iterations").push_back(warmup);
    t.strings("sync", "synchronisation between iterations").push_back(sync);
    append_timing_columns(t, st, "call");
    t.reals("algbw_GBps", "GB/s", "bytes / t_mean").push_back(algbw);
    t.reals("busbw_GBps", "GB/s", "algbw * 2(n-1)/n").push_back(algbw * allreduce_busbw_factor(nranks));
    t.reals("vs_mpi", "", "t_mean / t_mean of MPI_Allreduce for the same size, dtype, op, placement (NaN if not run)")
        .push_back(vs_mpi);
    t.ints("wrong", "", "elements wrong in verification, summed over ranks").push_back(wrong);
  }
};

void print_header(const Session& s, const Options& o, const Provenance& prov, const CopyBandwidth& bw) {
  fmt::print("# allreduce_perf: {} ranks on {} host(s) [{}], {} OpenMP thread(s) per rank\n", s.size,
             *prov.find("nhosts"), *prov.find("hosts"), *prov.find("omp_max_threads"));
  fmt::print("# MPI: {}\n", *prov.find("mpi_library_version"));
  fmt::print("# backend: {} ({}); the mpi algorithm is MPI_Allreduce on every backend\n", *prov.find("backend"),
             *prov.find("backend_library"));
  fmt::print("# sync between iterations: {}; off-cache: {}; pipelining chunk: {}; scaling: {}\n", o.run.sync,
             o.run.off_cache ? "yes (buffers evicted from the cache before each call)" : "no", o.chunk,
             o.run.weak() ? fmt::format("weak (message = size x {} ranks)", s.size) : "strong");
  fmt::print("# times are per call; t_min/t_mean/t_max: across ranks of each rank's mean; p50/p99: over\n"
             "# iterations of the slowest rank's time. algbw = bytes/t_mean; busbw = algbw * 2(n-1)/n\n"
             "# (= algbw * {:.3f} here). cpu/wall: thread CPU time / wall time (< 1: waiting or contention).\n",
             allreduce_busbw_factor(s.size));
  if (bw.best_GBps > 0)
    fmt::print("# memory copy bandwidth (STREAM-style copy, all ranks at once, 2 x {} per rank{}): {:.2f} GB/s per rank "
               "(best), {:.2f} GB/s (median)\n", format_size(bw.array_bytes),
               bw.flushed ? ", flushed from the cache before each copy" : "", bw.best_GBps, bw.median_GBps);
  fmt::print("#{:>9} {:>10} {:>5} {:>4} {:>3} {:>12} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} "
             "{:>6} {:>7} {:>6}\n", "size", "count", "type", "op", "ip", "algorithm", "iters", "t_min(us)",
             "t_mean(us)", "t_max(us)", "p50(us)", "p99(us)", "algbw", "busbw", "cpu/w", "vs_mpi", "#wrong");
  std::fflush(stdout);
}

// --membw-bytes: a size of at least 4K whose two arrays fit in this machine's memory.
std::size_t membw_bytes_option(const std::string& text) {
  std::uint64_t bytes = 0;
  try {
    bytes = parse_size(text);
  } catch (const Error& e) {
    throw UsageError(fmt::format("--membw-bytes: {}", e.what()));
  }
  if (bytes < 4096) throw UsageError(fmt::format("--membw-bytes {}: at least 4K", text));
  std::uint64_t memory = physical_memory_bytes();
  if (memory > 0 && bytes > memory / 2)
    throw UsageError(fmt::format("--membw-bytes {}: two arrays of it exceed this machine's {} of memory", text,
                                 format_size(memory)));
  return static_cast<std::size_t>(bytes);
}

// Refuses, before anything is allocated, a message smaller than one element of a dtype (it would
// run with count 0 and say nothing) and one whose case buffers (case_memory_bytes) do not fit in
// the rank's share of its node's memory (rank_memory_budget). Collective: every rank decides alike.
void check_message_sizes(const std::vector<std::uint64_t>& nominal, const std::vector<std::uint64_t>& message_bytes,
                         const std::vector<std::string>& dtypes, std::size_t chunk, bool weak, const Session& s) {
  auto bytes = [](std::uint64_t b) { return b < 1024 ? fmt::format("{} bytes", b) : fmt::format("{} ({} bytes)", format_size(b), b); };
  auto label = [&](std::size_t k) {
    return weak ? fmt::format("message size {} = {} per rank x {} ranks", bytes(message_bytes[k]), nominal[k], s.size)
                : fmt::format("message size {}", bytes(message_bytes[k]));
  };
  for (std::size_t k = 0; k < message_bytes.size(); ++k)
    for (const std::string& dt : dtypes)
      if (message_bytes[k] < size_of(parse_dtype(dt)))
        throw UsageError(fmt::format("{} is smaller than one {} element ({} bytes)", label(k), dt, size_of(parse_dtype(dt))));
  const std::uint64_t budget = rank_memory_budget(s.comm);
  for (std::size_t k = 0; k < message_bytes.size(); ++k) {
    std::uint64_t need = 0;
    try {
      need = case_memory_bytes(message_bytes[k], chunk);
    } catch (const Error&) {
      need = UINT64_MAX;
    }
    if (need > budget)
      throw UsageError(fmt::format("{}: its buffers need {} per rank (3 x the message + workspace), more than the "
                                   "{} this node's memory leaves each of its ranks", label(k), format_size(need),
                                   format_size(budget)));
  }
}

int run(Session& s) {
  Options o;
  CLI::App app{"allreduce_perf: allreduce latency/bandwidth sweep over algorithms, sizes and dtypes", "allreduce_perf"};
  o.sizes.add_to(app);
  o.run.add_to(app);
  std::string algorithm_help;
  for (const Algorithm& a : algorithms()) algorithm_help += fmt::format("{}{}", algorithm_help.empty() ? "" : ", ", a.name);
  app.add_option("-a,--algorithms", o.algorithms, fmt::format("comma list of algorithms or 'all' ({})", algorithm_help))
      ->capture_default_str();
  o.backend.add_to(app);
  app.add_option("-d,--dtypes,--datatype", o.dtypes, "comma list of f32, f64, i32, bf16 or 'all'")->capture_default_str();
  app.add_option("--op", o.op, "reduction: sum, max or min")->check(CLI::IsMember({"sum", "max", "min"}))
      ->capture_default_str();
  app.add_option("--placement", o.placement, "out (out of place), in (in place) or both")
      ->check(CLI::IsMember({"out", "in", "both"}))->capture_default_str();
  app.add_option("--chunk", o.chunk, "pipelining segment size for ring/tree")->capture_default_str();
  app.add_flag("!--no-membw", o.membw, "skip the memory-bandwidth probe at start-up");
  app.add_option("--membw-bytes", o.membw_bytes,
                 fmt::format("size of each of the probe's two arrays per rank (default: 4x the rank's cache share, "
                             "{} to {})", format_size(kCopyArrayMin), format_size(kCopyArrayMax)));
  if (!parse_command_line(app, s)) return 0;
  o.run.apply_log_level();
  if (!o.run.json.empty()) check_json_path(o.run.json);

  std::vector<std::uint64_t> sizes = o.sizes.resolve();
  // Weak scaling: the sizes given are per rank.
  std::vector<std::uint64_t> message_bytes = sizes;
  try {
    if (o.run.weak())
      for (std::uint64_t& b : message_bytes) b = checked_product(b, std::uint64_t(s.size), "--scaling weak message size");
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  std::vector<std::string> algos = o.backend.parse_algorithms(o.algorithms);
  std::vector<std::string> dtypes = parse_choice_list(o.dtypes, {"f32", "f64", "i32", "bf16"}, "dtype");
  std::size_t chunk = 0;
  try {
    chunk = parse_size(o.chunk);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (chunk == 0) throw UsageError("--chunk must be at least 1 byte");
  check_message_sizes(sizes, message_bytes, dtypes, chunk, o.run.weak(), s);
  std::vector<bool> placements;
  if (o.placement != "in") placements.push_back(false);
  if (o.placement != "out") placements.push_back(true);
  // The reference runs first so every other algorithm's row can show its ratio to it.
  std::stable_partition(algos.begin(), algos.end(), [](const std::string& a) { return a == "mpi"; });

  std::size_t membw_array = 0;
  if (o.membw) {
    membw_array = o.membw_bytes.empty() ? copy_probe_array_bytes(rank_cache_share(s.comm)) : membw_bytes_option(o.membw_bytes);
  }
  Backends backends = o.backend.make(s.comm);
  Provenance prov = collect_provenance(s);
  add_backend_provenance(prov, backends, s.comm);
  // Every rank copies at once: the bandwidth a rank gets while its peers also use memory.
  CopyBandwidth local_bw, bw;
  if (o.membw) {
    SP_MPI_CHECK(MPI_Barrier(s.comm));
    local_bw = measure_copy_bandwidth(membw_array);
    bw = local_bw;
    bw.best_GBps = spread_across_ranks(local_bw.best_GBps, s.comm).mean;
    bw.median_GBps = spread_across_ranks(local_bw.median_GBps, s.comm).mean;
    prov.add("memory_copy_GBps_per_rank", fmt::format("{:.3f}", bw.best_GBps));
    prov.add("memory_copy_array_bytes", std::to_string(bw.array_bytes));
    prov.add("memory_copy_flushed", bw.flushed ? "1" : "0");
  }
  TraceWriter trace(s, o.run.trace_path(prov), "allreduce", prov);
  log::info("{} sizes x {} dtype(s) x {} placement(s) x {} algorithm(s); trace {}", sizes.size(), dtypes.size(),
            placements.size(), algos.size(), trace.final_path().string());
  trace.set_attribute("busbw_factor", allreduce_busbw_factor(s.size));
  trace.set_attribute("scaling", o.run.scaling);
  trace.set_attribute("off_cache", static_cast<std::int64_t>(o.run.off_cache));
  if (o.membw) {
    trace.set_attribute("memory_copy_GBps", bw.best_GBps);
    trace.set_attribute("memory_copy_array_bytes", static_cast<std::int64_t>(bw.array_bytes));
    trace.set_attribute("memory_copy_flushed", static_cast<std::int64_t>(bw.flushed));
  }
  if (s.rank == 0) print_header(s, o, prov, bw);

  // A device backend's calls are timed on its stream as well (CUDA events): a second phase.
  std::vector<std::pair<std::string, std::string>> phases{{"allreduce", "one allreduce call"}};
  if (backends.backend().on_device())
    phases.emplace_back("allreduce_on_device", "the same call on the device's clock (CUDA events on the rank's stream)");
  SampleLog samples(phases);
  SummaryTable summary;
  std::map<std::tuple<std::uint64_t, std::string, bool>, double> mpi_time;
  Workspace ws;
  // The zero-copy placement's cases hold at most three buffers of the largest size (verification).
  const std::uint64_t largest = *std::max_element(message_bytes.begin(), message_bytes.end());
  attach_node_segment(backends, ws, s.comm, algos, o.algorithms, checked_product(3, largest + 64, "the node segment's arena"));
  long long total_wrong = 0;
  std::uint64_t evicted_bytes = 0;  // this rank's, over every timed call (--off-cache)
  std::string first_wrong;
  std::int64_t case_id = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::uint64_t bytes = message_bytes[k];
    for (const std::string& dt : dtypes) {
      for (bool in_place : placements) {
        for (const std::string& an : algos) {
          CaseSpec c{&find_algorithm(an), parse_dtype(dt), parse_op(o.op), in_place, bytes / size_of(parse_dtype(dt)), chunk};
          int iters = o.run.iters > 0 ? o.run.iters : auto_iters(c.bytes());
          int warmup = o.run.warmup >= 0 ? o.run.warmup : auto_warmup(iters);
          log::debug("case {}: {} {} {} B {}, {} iterations", case_id, an, dt, c.bytes(),
                     in_place ? "in place" : "out of place", iters);
          Transport& transport = backends.for_algorithm(*c.algorithm);
          TimedRun r = time_case(c, {o.run.iters, o.run.warmup, o.run.barrier(), o.run.off_cache}, iters, warmup, s.comm, transport, ws);
          evicted_bytes += r.evicted_bytes;
          long long wrong = verify_case(c, s.comm, transport, ws);
          CaseStats st = case_stats(r, s.comm);
          auto key = std::make_tuple(bytes, dt, in_place);
          if (an == "mpi") mpi_time[key] = st.mean.mean;
          double vs = mpi_time.count(key) && mpi_time[key] > 0 ? st.mean.mean / mpi_time[key] : std::nan("");
          for (std::size_t i = 0; i < r.samples.size(); ++i) samples.add(case_id, static_cast<std::int64_t>(i), 0, -1, r.samples[i]);
          for (std::size_t i = 0; i < r.device_s.size(); ++i)
            samples.add(case_id, static_cast<std::int64_t>(i), 1, -1, {r.samples[i].start_s, r.device_s[i], 0.0});
          summary.add(case_id, c, sizes[k], iters, warmup, o.run.sync, st, vs, wrong, s.size);
          if (wrong && first_wrong.empty()) first_wrong = fmt::format("{} {} {} {} B {}", an, dt, o.op, c.bytes(), in_place ? "in place" : "out of place");
          total_wrong += wrong;
          if (s.rank == 0) {
            double algbw = st.mean.mean > 0 ? double(c.bytes()) / st.mean.mean / 1e9 : 0;
            double cpu_ratio = st.mean.mean > 0 ? st.cpu_mean_s / st.mean.mean : 0;
            fmt::print(" {:>9} {:>10} {:>5} {:>4} {:>3} {:>12} {:>6} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} "
                       "{:>8.3f} {:>8.3f} {:>6.2f} {:>7} {:>6}\n", format_size(c.bytes()), c.count, dt, o.op,
                       in_place ? "in" : "out", an, iters, st.mean.min * 1e6, st.mean.mean * 1e6, st.mean.max * 1e6,
                       st.iteration.median * 1e6, st.iteration.p99 * 1e6, algbw, algbw * allreduce_busbw_factor(s.size),
                       cpu_ratio, std::isnan(vs) ? std::string("-") : fmt::format("{:.2f}", vs), wrong);
            std::fflush(stdout);
          }
          ++case_id;
        }
      }
    }
  }
  Table ranks = rank_map_row();
  ranks.reals("memory_copy_GBps", "GB/s", "this rank's STREAM-style copy bandwidth (0 if not measured)")
      .push_back(local_bw.best_GBps);
  trace.write_table("summary", summary.t, TableScope::shared, "one row per benchmark case");
  trace.write_table("phases", samples.phases_table(), TableScope::shared, "phase ids used in samples");
  trace.write_table("samples", samples.samples_table(), TableScope::per_rank, "every timed iteration of every rank");
  trace.write_table("ranks", ranks, TableScope::per_rank, "rank -> host -> core map");
  trace.set_attribute("wrong_elements", static_cast<std::int64_t>(total_wrong));
  trace.set_attribute("off_cache_evicted_bytes", static_cast<std::int64_t>(evicted_bytes));
  auto path = trace.commit();
  if (s.rank == 0) {
    fmt::print("# trace: {}\n", path.string());
    std::fflush(stdout);
  }
  if (total_wrong > 0) {
    if (s.rank == 0)
      std::fprintf(stderr, "allreduce_perf: error: verification failed: %lld wrong element(s), first in %s\n",
                   total_wrong, first_wrong.c_str());
    return 1;
  }
  if (s.rank == 0 && !o.run.json.empty()) write_json_report(o.run.json, "allreduce", prov, path, {{"summary", &summary.t}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return sp::run_program(argc, argv, "allreduce_perf", MPI_THREAD_SINGLE, run); }
