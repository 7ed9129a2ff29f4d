// p2p_perf: point-to-point latency, bandwidth, bidirectional bandwidth and message rate between
// rank pairs (r with r + n/2, all pairs at once; or --pairs each: every pair of ranks alone, in
// turn), by OSU's definitions, on MPI, Gloo or NCCL; every
// message checked against the sender's pattern after the timed loop. One table row per (test,
// size) on stdout (rank 0), every sample in the HDF5 trace. Exit 1 if any element was wrong.
// The cases and rows: collectives/bench/p2p_bench.hpp; the flags: sweep.hpp; the loop: driver.hpp.
#include "collectives/bench/p2p_bench.hpp"
#include "collectives/bench/sweep.hpp"
#include "core/run/log.hpp"

namespace {

using namespace sp;
using namespace sp::coll;

int run(Session& s, P2pOptions& o) {
  const P2pSweep w = resolve_p2p_sweep(o, s);

  Backends backends = o.backend.make(s.comm);
  Provenance prov = collect_provenance(s);
  add_backend_provenance(prov, backends, s.comm);
  BenchmarkRun bench(s, o.run, "p2p_perf", "p2p", prov,
                     {{"call", "one round trip (latency) or one window (bw, bibw)"}});
  log::info("{} test(s) x {} sizes, window {}; trace {}", w.tests.size(), w.bytes.size(), w.window,
            bench.trace().final_path().string());
  bench.trace().set_attribute("pairs", static_cast<std::int64_t>(w.each_pair ? s.size * (s.size - 1) / 2 : s.size / 2));
  bench.trace().set_attribute("pair_mode", std::string(w.each_pair ? "each" : "halves"));
  bench.trace().set_attribute("window", static_cast<std::int64_t>(w.window));
  bench.trace().set_attribute("slots", o.slots);
  bench.trace().set_attribute("off_cache", static_cast<std::int64_t>(o.run.off_cache));
  SummaryRows<P2pRow> summary{p2p_columns(), {}};
  print_p2p_header(s, prov, o.run, w.each_pair, summary.columns);
  // The pairs that run, one case each: (-1, -1) = every pair r, r + n/2 at once.
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < s.size; ++a)
    for (int b = a + 1; b < s.size && w.each_pair; ++b) pairs.emplace_back(a, b);
  if (!w.each_pair) pairs.emplace_back(-1, -1);

  Transport& transport = backends.backend();
  for (const std::string& test_name : w.tests)
    for (std::uint64_t bytes : w.bytes)
      for (const auto& [a, b] : pairs) {
        const P2pTest test = parse_p2p_test(test_name);
        P2pCase c(test, bytes, w.window, w.distinct_slots, transport, a, b);
        const int window = test == P2pTest::latency ? 1 : w.window;
        // About 256 MiB moved per case, as allreduce_perf's cases (harness.hpp: auto_iters).
        const int iters = o.run.iters > 0 ? o.run.iters : auto_iters(bytes * std::uint64_t(window));
        const int warmup = o.run.warmup >= 0 ? o.run.warmup : auto_warmup(iters);
        const auto id = static_cast<std::int64_t>(summary.table.rows());
        const std::string pair = a >= 0 ? fmt::format(" pair {}-{}", a, b) : "";
        const std::string label = fmt::format("{} {} B window {}{}", test_name, bytes, window, pair);
        log::debug("case {}: {}, {} iterations", id, label, iters);
        CaseResult r = bench.run_case(c, id, iters, warmup, label);
        summary.add(s, {test, bytes, window, a >= 0 ? 1 : s.size / 2, a, b, r});
      }
  return bench.finish({"summary", "one row per (test, message size) and, with --pairs each, pair", &summary.table}, {},
                      "every timed call of every rank", rank_map_row());
}

}  // namespace

int main(int argc, char** argv) {
  return sp::coll::bench_main(argc, argv, "p2p_perf",
                              "p2p_perf: point-to-point latency and bandwidth between rank pairs (OSU's definitions)",
                              &sp::coll::P2pOptions::add_to, run);
}
