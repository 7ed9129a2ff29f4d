#include "collectives/bench/allreduce_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "core/run/sizes.hpp"

namespace sp::coll {

double AllreduceRow::algbw_GBps() const {
  const double t = result.stats.mean.mean;
  return t > 0 ? double(spec.bytes()) / t / 1e9 : 0;
}

Columns<AllreduceRow> allreduce_columns(Collective collective) {
  using R = AllreduceRow;
  const CollectiveInfo& ci = info(collective);
  auto i64 = [](auto v) { return CellValue(static_cast<std::int64_t>(v)); };
  auto us = [](double s) { return fixed(s * 1e6, 2); };
  Columns<R> c;
  c.table = {
      {"case", "", "case id (samples.case refers to it)", [=](const R& r) { return i64(r.result.id); }},
      {"algorithm", "", fmt::format("{} algorithm", ci.name),
       [](const R& r) { return CellValue(std::string(r.spec.algorithm->name)); }},
      {"dtype", "", "element type", [](const R& r) { return CellValue(std::string(name(r.spec.dtype))); }},
      {"op", "", "reduction operator", [](const R& r) { return CellValue(std::string(name(r.spec.op))); }},
      {"placement", "", "in (in place) or out (out of place)",
       [](const R& r) { return CellValue(std::string(r.spec.in_place ? "in" : "out")); }},
      {"bytes", "B", "message size", [=](const R& r) { return i64(r.spec.bytes()); }},
      {"nominal_bytes", "B", "size from -b/-e/--sizes (per rank under --scaling weak: bytes = nominal x ranks)",
       [=](const R& r) { return i64(r.nominal_bytes); }},
      {"count", "", "elements", [=](const R& r) { return i64(r.spec.count); }},
      {"iters", "", "timed iterations", [=](const R& r) { return i64(r.result.iters); }},
      {"warmup", "", "untimed warm-up iterations", [=](const R& r) { return i64(r.result.warmup); }},
      {"sync", "", "synchronisation between iterations", [](const R& r) { return CellValue(r.sync); }},
  };
  for (auto& t : timing_table_columns<R>("call")) c.table.push_back(std::move(t));
  c.table.insert(c.table.end(),
                 {
                     {"algbw_GBps", "GB/s", "bytes / t_mean", [](const R& r) { return CellValue(r.algbw_GBps()); }},
                     {"busbw_GBps", "GB/s", fmt::format("algbw * {}", ci.busbw_formula),
                      [](const R& r) { return CellValue(r.algbw_GBps() * r.busbw_factor); }},
                     {"vs_mpi", "",
                      fmt::format("t_mean / t_mean of {} for the same size, dtype, op, placement (NaN if not run)",
                                  ci.library_call),
                      [](const R& r) { return CellValue(r.vs_mpi); }},
                     {"wrong", "", "elements wrong in verification, summed over ranks",
                      [=](const R& r) { return i64(r.result.wrong); }},
                 });
  const auto& st = [](const R& r) -> const CaseStats& { return r.result.stats; };
  c.printed = {
      {"size", 9, [](const R& r) { return format_size_exact(r.spec.bytes()); }},
      {"count", 10, [](const R& r) { return std::to_string(r.spec.count); }},
      {"type", 5, [](const R& r) { return std::string(name(r.spec.dtype)); }},
      {"op", 4, [](const R& r) { return std::string(name(r.spec.op)); }},
      {"ip", 3, [](const R& r) { return std::string(r.spec.in_place ? "in" : "out"); }},
      {"algorithm", 12, [](const R& r) { return std::string(r.spec.algorithm->name); }},
      {"iters", 6, [](const R& r) { return std::to_string(r.result.iters); }},
      {"t_min(us)", 10, [=](const R& r) { return us(st(r).mean.min); }},
      {"t_mean(us)", 10, [=](const R& r) { return us(st(r).mean.mean); }},
      {"t_max(us)", 10, [=](const R& r) { return us(st(r).mean.max); }},
      {"p50(us)", 10, [=](const R& r) { return us(st(r).iteration.median); }},
      {"p99(us)", 10, [=](const R& r) { return us(st(r).iteration.p99); }},
      {"algbw", 8, [](const R& r) { return fixed(r.algbw_GBps(), 3); }},
      {"busbw", 8, [](const R& r) { return fixed(r.algbw_GBps() * r.busbw_factor, 3); }},
      {"cpu/w", 6, [=](const R& r) { return fixed(st(r).mean.mean > 0 ? st(r).cpu_mean_s / st(r).mean.mean : 0, 2); }},
      {"vs_mpi", 7, [](const R& r) { return std::isnan(r.vs_mpi) ? std::string("-") : fixed(r.vs_mpi, 2); }},
      {"#wrong", 6, [](const R& r) { return std::to_string(r.result.wrong); }},
  };
  return c;
}

void print_allreduce_header(const Session& s, const SweepOptions& o, const Provenance& prov, const CopyBandwidth& bw,
                            const Columns<AllreduceRow>& columns, const std::string& program) {
  if (s.rank != 0) return;
  const CollectiveInfo& ci = info(o.collective);
  fmt::print("{}", simulation_banner());
  fmt::print("# {}: {} ranks on {} host(s) [{}], {} OpenMP thread(s) per rank\n", program, s.size, *prov.find("nhosts"),
             *prov.find("hosts"), *prov.find("omp_max_threads"));
  if (o.collective != Collective::allreduce)
    fmt::print("# collective: {}{}{} ({}; size = the message as nccl-tests counts it)\n", ci.name,
               ci.rooted ? fmt::format(", root {}", o.root) : "",
               o.collective == Collective::all_to_allv ? fmt::format(", imbalance {}", o.imbalance) : "",
               ci.one_buffer ? "in one buffer, as MPI_Bcast" : "out of place");
  fmt::print("# MPI: {}\n", *prov.find("mpi_library_version"));
  fmt::print("# backend: {} ({}); the mpi algorithm is {} on every backend\n", *prov.find("backend"),
             *prov.find("backend_library"), ci.library_call);
  fmt::print("# sync between iterations: {}; off-cache: {}; pipelining chunk: {}; scaling: {}\n", o.run.sync,
             o.run.off_cache ? "yes (buffers evicted from the cache before each call)" : "no", o.chunk,
             o.run.weak() ? fmt::format("weak (message = size x {} ranks)", s.size) : "strong");
  fmt::print(
      "# times are per call; t_min/t_mean/t_max: across ranks of each rank's mean; p50/p99: over\n"
      "# iterations of the slowest rank's time. algbw = bytes/t_mean; busbw = algbw * {}\n"
      "# (= algbw * {:.3f} here). cpu/wall: thread CPU time / wall time (< 1: waiting or contention).\n",
      ci.busbw_formula, ci.busbw_factor(s.size));
  if (bw.best_GBps > 0)
    fmt::print(
        "# memory copy bandwidth (STREAM-style copy, all ranks at once, 2 x {} per rank{}): {:.2f} GB/s per rank "
        "(best), {:.2f} GB/s (median)\n",
        format_size(bw.array_bytes), bw.flushed ? ", flushed from the cache before each copy" : "", bw.best_GBps,
        bw.median_GBps);
  fmt::print("{}", columns.header_line());
  std::fflush(stdout);
}

}  // namespace sp::coll
