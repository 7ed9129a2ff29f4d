#include "collectives/bench/sweep.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "collectives/bench/bucket_bench.hpp"
#include "collectives/bench/harness.hpp"
#include "collectives/collective.hpp"
#include "core/run/error.hpp"
#include "core/measure/samples.hpp"
#include "core/run/sizes.hpp"
#include "core/measure/stats.hpp"
#include "core/measure/topology.hpp"

namespace sp::coll {

void SweepOptions::add_to(CLI::App& app) {
  sizes.add_to(app);
  run.add_to(app);
  std::string algorithm_help;
  for (const Algorithm& a : coll::algorithms())
    algorithm_help += fmt::format("{}{}", algorithm_help.empty() ? "" : ", ", a.name);
  app.add_option("-a,--algorithms", algorithms, fmt::format("comma list of algorithms or 'all' ({})", algorithm_help))
      ->capture_default_str();
  backend.add_to(app);
  app.add_option("-d,--dtypes,--datatype", dtypes, "comma list of f32, f64, i32, bf16 or 'all'")->capture_default_str();
  app.add_option("--op", op, "reduction: sum, max or min")
      ->check(CLI::IsMember({"sum", "max", "min"}))
      ->capture_default_str();
  app.add_option("--placement", placement, "out (out of place), in (in place) or both")
      ->check(CLI::IsMember({"out", "in", "both"}))
      ->capture_default_str();
  app.add_option("--chunk", chunk, "pipelining segment size for ring/tree")->capture_default_str();
  app.add_flag("!--no-membw", membw, "skip the memory-bandwidth probe at start-up");
  app.add_option("--membw-bytes", membw_bytes,
                 fmt::format("size of each of the probe's two arrays per rank (default: 4x the rank's cache share, "
                             "{} to {})",
                             format_size(kCopyArrayMin), format_size(kCopyArrayMax)));
}

namespace {

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

// The most memory any of the algorithms needs for one case of message_bytes (case_memory_bytes),
// or UINT64_MAX when that is too large to count.
std::uint64_t largest_case_memory(const std::vector<std::string>& algorithms, Collective c, std::uint64_t message_bytes,
                                  std::uint64_t chunk_bytes) {
  std::uint64_t need = 0;
  try {
    for (const std::string& a : algorithms)
      need = std::max(need, case_memory_bytes(find_algorithm(a, c), message_bytes, chunk_bytes));
  } catch (const Error&) {
    return UINT64_MAX;
  }
  return need;
}

void check_message_sizes(const Sweep& w, bool weak, const Session& s) {
  auto bytes = [](std::uint64_t b) {
    return b < 1024 ? fmt::format("{} bytes", b) : fmt::format("{} ({} bytes)", format_size(b), b);
  };
  auto label = [&](std::size_t k) {
    return weak ? fmt::format("message size {} = {} per rank x {} ranks", bytes(w.message_bytes[k]), w.nominal_bytes[k],
                              s.size)
                : fmt::format("message size {}", bytes(w.message_bytes[k]));
  };
  const bool blocked = info(w.collective).blocked;
  for (std::size_t k = 0; k < w.message_bytes.size(); ++k)
    for (const std::string& dt : w.dtypes) {
      if (w.message_bytes[k] < size_of(parse_dtype(dt)))
        throw UsageError(
            fmt::format("{} is smaller than one {} element ({} bytes)", label(k), dt, size_of(parse_dtype(dt))));
      if (blocked && w.message_bytes[k] / size_of(parse_dtype(dt)) < std::uint64_t(s.size))
        throw UsageError(fmt::format("{} holds fewer {} elements than the {} ranks: {} moves one block per rank",
                                     label(k), dt, s.size, info(w.collective).name));
    }
  // Simulated, every case fits: those past the private limit run on shared buffers (timing_only.hpp).
  if (kSimulatedBuild) return;
  const std::uint64_t budget = rank_memory_budget(s.comm);
  for (std::size_t k = 0; k < w.message_bytes.size(); ++k) {
    const std::uint64_t need = largest_case_memory(w.algorithms, w.collective, w.message_bytes[k], w.chunk_bytes);
    if (need > budget)
      throw UsageError(
          fmt::format("{}: its buffers need {} per rank (3 x the message + workspace), more than the "
                      "{} this node's memory leaves each of its ranks",
                      label(k), format_size(need), format_size(budget)));
  }
}

// The gradients, their pattern and the expected result (3 x the layout's bytes) and the workspace
// must fit in this rank's share of the node's memory: refused before allocating.
void check_layout_fits(const GradientLayout& layout, Dtype dt, const std::vector<std::string>& algorithms,
                       const RunOptions& ro, const Session& s) {
  if (kSimulatedBuild) return;  // past the private limit it runs on shared buffers (timing_only.hpp)
  const std::uint64_t budget = rank_memory_budget(s.comm);
  const std::size_t n = layout.total_numel();
  std::uint64_t need = UINT64_MAX;  // a layout too large to count in bytes needs too much
  if (n <= UINT64_MAX / size_of(dt))
    need = largest_case_memory(algorithms, Collective::allreduce, n * size_of(dt), kBucketChunkBytes);
  if (need > budget)
    throw UsageError(
        fmt::format("layout {}{}: {} elements of {} need {} per rank (3 x the gradients + workspace), more "
                    "than the {} this node's memory leaves each of its ranks",
                    layout.name, ro.weak() ? fmt::format(" x {} ranks", s.size) : "", n, name(dt), format_size(need),
                    format_size(budget)));
}

}  // namespace

Sweep resolve_sweep(const SweepOptions& o, const Session& s) {
  Sweep w;
  w.nominal_bytes = o.sizes.resolve();
  w.message_bytes = w.nominal_bytes;
  try {
    if (o.run.weak())  // the sizes given are per rank
      for (std::uint64_t& b : w.message_bytes)
        b = checked_product(b, std::uint64_t(s.size), "--scaling weak message size");
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  w.collective = o.collective;
  w.root = o.root;
  w.imbalance = o.imbalance;
  if (o.imbalance != 0 && o.collective != Collective::all_to_allv)
    throw UsageError(fmt::format("--imbalance {}: only all_to_allv moves blocks of unequal sizes", o.imbalance));
  if (!(o.imbalance >= 0 && o.imbalance < 1))
    throw UsageError(fmt::format("--imbalance {}: from 0 (balanced) to below 1", o.imbalance));
  if (o.collective != Collective::allreduce) {
    if (o.placement != "out")
      throw UsageError(fmt::format("--placement {}: {} runs out of place only", o.placement, info(o.collective).name));
    if (o.root < 0 || o.root >= s.size)
      throw UsageError(fmt::format("--root {}: not one of the {} ranks (0 to {})", o.root, s.size, s.size - 1));
  }
  w.algorithms = o.backend.parse_algorithms(o.algorithms, o.collective);
  w.dtypes = parse_choice_list(o.dtypes, {"f32", "f64", "i32", "bf16"}, "dtype");
  try {
    w.chunk_bytes = parse_size(o.chunk);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (w.chunk_bytes == 0) throw UsageError("--chunk must be at least 1 byte");
  check_message_sizes(w, o.run.weak(), s);
  if (o.placement != "in") w.placements.push_back(false);
  if (o.placement != "out") w.placements.push_back(true);
  // The reference runs first so every other algorithm's row can show its ratio to it.
  std::stable_partition(w.algorithms.begin(), w.algorithms.end(), [](const std::string& a) { return a == "mpi"; });
  // Simulated (SMPI): the probe would time this machine's memory, not the platform's.
  if (o.membw && !kSimulatedBuild)
    w.membw_array_bytes =
        o.membw_bytes.empty() ? copy_probe_array_bytes(rank_cache_share(s.comm)) : membw_bytes_option(o.membw_bytes);
  return w;
}

CopyBandwidth probe_copy_bandwidth(const Sweep& w, const Session& s, Provenance& prov, CopyBandwidth* local) {
  if (w.membw_array_bytes == 0) return {};
  SP_MPI_CHECK(MPI_Barrier(s.comm));
  *local = measure_copy_bandwidth(w.membw_array_bytes);
  CopyBandwidth bw = *local;
  bw.best_GBps = spread_across_ranks(local->best_GBps, s.comm).mean;
  bw.median_GBps = spread_across_ranks(local->median_GBps, s.comm).mean;
  prov.add("memory_copy_GBps_per_rank", fmt::format("{:.3f}", bw.best_GBps));
  prov.add("memory_copy_array_bytes", std::to_string(bw.array_bytes));
  prov.add("memory_copy_flushed", bw.flushed ? "1" : "0");
  return bw;
}

void set_sweep_attributes(TraceWriter& trace, const Sweep& w, const SweepOptions& o, const Session& s,
                          const CopyBandwidth& bw) {
  trace.set_attribute("busbw_factor", info(w.collective).busbw_factor(s.size));
  if (w.collective != Collective::allreduce) {
    trace.set_attribute("collective", std::string(info(w.collective).name));
    trace.set_attribute("library_call", std::string(info(w.collective).library_call));
    if (info(w.collective).rooted) trace.set_attribute("root", static_cast<std::int64_t>(w.root));
    if (w.collective == Collective::all_to_allv) trace.set_attribute("imbalance", w.imbalance);
  }
  trace.set_attribute("scaling", o.run.scaling);
  trace.set_attribute("off_cache", static_cast<std::int64_t>(o.run.off_cache));
  if (w.membw_array_bytes) {
    trace.set_attribute("memory_copy_GBps", bw.best_GBps);
    trace.set_attribute("memory_copy_array_bytes", static_cast<std::int64_t>(bw.array_bytes));
    trace.set_attribute("memory_copy_flushed", static_cast<std::int64_t>(bw.flushed));
  }
}

Table sweep_ranks_row(const CopyBandwidth& local) {
  Table ranks = rank_map_row();
  ranks.reals("memory_copy_GBps", "GB/s", "this rank's STREAM-style copy bandwidth (0 if not measured)")
      .push_back(local.best_GBps);
  return ranks;
}

void SweepOptions::add_collective_to(CLI::App& app) {
  add_to(app);
  app.add_option("-c,--collective", collective_flag,
                 "the collective: " + collective_names() +
                     " (case, '_' and '-' ignored; bcast and IMB's Reduce_scatter_block accepted)")
      ->capture_default_str();
  app.add_option("--root", root, "root rank of broadcast and reduce")->capture_default_str();
  app.add_option("--imbalance", imbalance,
                 "all_to_allv: rank j receives floor(size/p x w_j) from every rank, w_j from "
                 "1 - F (rank 0) to 1 + F (the last rank); 0 <= F < 1")
      ->capture_default_str();
  std::string choices;
  for (Collective c : {Collective::reduce_scatter, Collective::all_gather, Collective::broadcast, Collective::reduce,
                       Collective::all_to_all, Collective::all_to_allv})
    choices +=
        fmt::format("{}{}: {}", choices.empty() ? "" : "; ", info(c).name, fmt::join(algorithm_names("mpi", c), ", "));
  app.get_option("--algorithms")->description("comma list of the collective's algorithms or 'all' (" + choices + ")");
}

void BucketSweepOptions::add_to(CLI::App& app) {
  run.add_to(app);
  backend.add_to(app);
  app.add_option("-l,--layout", layout, "gradient layout: resnet50, bert-base, or a file ('name 64x3x7x7' per line)")
      ->capture_default_str();
  app.add_option("-c,--caps", caps, "comma list of bucket caps in MiB, 'tensor' (one per tensor), 'all' (one buffer)")
      ->capture_default_str();
  app.add_option("-a,--algorithms", algorithms, "comma list of allreduce algorithms or 'all'")->capture_default_str();
  app.add_option("-d,--dtype", dtype, "gradient element type")
      ->check(CLI::IsMember({"f32", "f64", "bf16"}))
      ->capture_default_str();
  app.add_flag("--print-buckets", print_buckets, "print every bucket's tensor indices (forward order) on stdout");
}

BucketSweep resolve_bucket_sweep(const BucketSweepOptions& o, const Session& s) {
  BucketSweep w;
  try {
    w.layout = load_layout(o.layout);
    if (o.run.weak()) w.layout = w.layout.scaled(static_cast<std::size_t>(s.size));
    for (const std::string& c : split_list(o.caps, "bucket cap list")) w.caps.push_back(parse_bucket_cap(c));
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  w.algorithms = o.backend.parse_algorithms(o.algorithms);
  w.dtype = parse_dtype(o.dtype);
  check_layout_fits(w.layout, w.dtype, w.algorithms, o.run, s);
  w.iters = o.run.iters > 0 ? o.run.iters : 10;
  w.warmup = o.run.warmup >= 0 ? o.run.warmup : 2;
  return w;
}

void set_bucket_sweep_attributes(TraceWriter& trace, const BucketSweep& w, const RunOptions& ro, const Session& s) {
  trace.set_attribute("layout", w.layout.name);
  trace.set_attribute("scaling", ro.scaling);
  trace.set_attribute("layout_scale", static_cast<std::int64_t>(ro.weak() ? s.size : 1));
  trace.set_attribute("off_cache", static_cast<std::int64_t>(ro.off_cache));
  trace.set_attribute("busbw_factor", allreduce_busbw_factor(s.size));
}

void P2pOptions::add_to(CLI::App& app) {
  sizes.add_to(app);
  run.add_to(app);
  backend.add_to(app);
  app.add_option("-t,--tests", tests, "comma list of latency, bw, bibw or 'all'")->capture_default_str();
  app.add_option("--window", window, "messages in flight per pair and direction in bw and bibw")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--slots", slots,
                 "a window's receive buffers: shared (one, as OSU's osu_bw) or distinct (one per "
                 "message, each checked)")
      ->check(CLI::IsMember({"shared", "distinct"}))
      ->capture_default_str();
  app.add_option("--pairs", pairs,
                 "halves: rank r with r + n/2, every pair at once; each: every pair of ranks, one "
                 "pair at a time while the others wait (a matrix of the links, as mpiGraph's)")
      ->check(CLI::IsMember({"halves", "each"}))
      ->capture_default_str();
}

P2pSweep resolve_p2p_sweep(const P2pOptions& o, const Session& s) {
  if (o.run.weak()) throw UsageError("--scaling weak: a message between two ranks has no per-rank share to scale");
  P2pSweep w;
  w.bytes = o.sizes.resolve();
  for (std::uint64_t b : w.bytes)
    if (b == 0 || b % 4 != 0)
      throw UsageError(
          fmt::format("message size {} bytes: point-to-point messages are whole 4-byte elements (4, 8, ...)", b));
  w.tests = parse_choice_list(o.tests, {"latency", "bw", "bibw"}, "point-to-point test");
  w.window = o.window;
  w.distinct_slots = o.slots == "distinct";
  w.each_pair = o.pairs == "each";
  if (s.size < 2)
    throw UsageError(fmt::format("p2p_perf measures between rank pairs: it needs 2 or more ranks, got {}", s.size));
  if (!w.each_pair && s.size % 2 != 0)
    throw UsageError(
        fmt::format("p2p_perf pairs rank r with rank r + n/2: it needs an even number of ranks, got {} "
                    "(--pairs each takes any)",
                    s.size));
  const std::uint64_t largest = *std::max_element(w.bytes.begin(), w.bytes.end());
  std::uint64_t need = UINT64_MAX;
  try {  // the send buffer, the receive slots and verification's expected message
    need = checked_product(largest, std::uint64_t(w.distinct_slots ? w.window : 1) + 2, "p2p_perf's buffers");
  } catch (const Error&) {}
  const std::uint64_t budget = rank_memory_budget(s.comm);
  if (need > budget)
    throw UsageError(
        fmt::format("message size {} with --window {} --slots {}: its buffers need {} per rank (slots + 2 "
                    "messages), more than the {} this node's memory leaves each of its ranks",
                    format_size(largest), w.window, o.slots, format_size(need), format_size(budget)));
  return w;
}

}  // namespace sp::coll
