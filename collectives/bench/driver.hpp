// The benchmark driver every communication benchmark runs on (allreduce_perf, bucket_sweep, p2p_perf):
// the timed loop, verification, statistics across ranks, the summary rows (printed on rank 0, in
// the trace, in --json), the samples and the trace itself. A program brings its cases (BenchCase),
// the columns of its rows (core/measure/columns.hpp) and its header text; nothing here knows what a case
// runs.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/bench/harness.hpp"
#include "core/measure/columns.hpp"
#include "core/run/options.hpp"
#include "core/run/program.hpp"
#include "core/measure/provenance.hpp"
#include "core/measure/samples.hpp"
#include "core/trace/trace.hpp"

namespace sp::coll {

// What one case came to (identical on every rank).
struct CaseResult {
  std::int64_t id = 0;
  int iters = 0, warmup = 0;
  CaseStats stats;
  long long wrong = 0;  // summed over ranks; -1: not verified (a timing-only case, timing_only.hpp)
};

// The appended timing columns every summary shares (t_min_us ... runqueue_wait_us: harness.hpp),
// for rows that hold their CaseResult as `result`; `unit` names one timed sample ("call").
template <typename Row>
std::vector<TableColumn<Row>> timing_table_columns(const std::string& unit) {
  auto us = [](double s) { return CellValue(s * 1e6); };
  return {
      {"t_min_us", "us", "fastest rank's mean time per " + unit,
       [=](const Row& r) { return us(r.result.stats.mean.min); }},
      {"t_mean_us", "us", "mean over ranks of each rank's mean time per " + unit,
       [=](const Row& r) { return us(r.result.stats.mean.mean); }},
      {"t_max_us", "us", "slowest rank's mean time per " + unit,
       [=](const Row& r) { return us(r.result.stats.mean.max); }},
      {"slowest_rank", "", "rank with the largest mean time",
       [](const Row& r) { return CellValue(std::int64_t(r.result.stats.mean.slowest_rank)); }},
      {"p50_us", "us", "median over " + unit + "s of the per-" + unit + " maximum over ranks",
       [=](const Row& r) { return us(r.result.stats.iteration.median); }},
      {"p99_us", "us", "99th percentile over " + unit + "s of the per-" + unit + " maximum over ranks",
       [=](const Row& r) { return us(r.result.stats.iteration.p99); }},
      {"cpu_mean_us", "us", "mean thread CPU time per " + unit,
       [=](const Row& r) { return us(r.result.stats.cpu_mean_s); }},
      {"runqueue_wait_us", "us", "mean run-queue wait per " + unit + " (-1 unknown)",
       [=](const Row& r) {
         return r.result.stats.runqueue_wait_s < 0 ? CellValue(-1.0) : us(r.result.stats.runqueue_wait_s);
       }},
  };
}

// One run of a benchmark program: its provenance, trace, samples, summary and verdict.
class BenchmarkRun {
 public:
  // Collective. Opens the trace (kind: "allreduce", "bucket_sweep", "p2p"); phase 0 of `phases` is the
  // timed call; device_phase, when >= 0, the same call on the transport's clock.
  BenchmarkRun(Session& s, const RunOptions& ro, std::string program, std::string kind, Provenance prov,
               std::vector<std::pair<std::string, std::string>> phases, int device_phase = -1);
  TraceWriter& trace() { return trace_; }
  SampleLog& samples() { return samples_; }
  // Simulated build: the private limit of the timing-only cases (simulated_private_bytes(), read
  // once, before the trace opens); 0 otherwise.
  std::uint64_t private_bytes() const { return private_bytes_; }
  // Collective: case c's timed loop (its samples under `id`), verification and statistics. A
  // wrong result is remembered under `label` for the closing error.
  CaseResult run_case(BenchCase& c, std::int64_t id, int iters, int warmup, const std::string& label);
  // Collective, once: the summary, the `extra` tables after it, phases, samples and ranks (`ranks`:
  // this rank's row, rank_map_row() unless the program adds columns) into the trace, which is
  // committed; "# trace: PATH" on stdout; a verification failure is a one-line error and exit 1,
  // otherwise --json gets the summary and `json_extra`. Returns the exit code.
  struct NamedTable {
    std::string name, description;
    const Table* table;
  };
  int finish(const NamedTable& summary, const std::vector<NamedTable>& extra, const std::string& samples_description,
             const Table& ranks, const std::vector<NamedTable>& json_extra = {});

 private:
  Session& s_;
  const RunOptions& ro_;
  std::string program_, kind_;
  Provenance prov_;
  std::uint64_t private_bytes_;  // before trace_: a bad SCALEPROBE_SIM_PRIVATE_BYTES opens no trace
  TraceWriter trace_;
  SampleLog samples_;
  int device_phase_;
  long long total_wrong_ = 0;
  std::int64_t timing_only_cases_ = 0;  // run on shared buffers, unverified (timing_only.hpp)
  std::uint64_t evicted_bytes_ = 0;     // this rank's, over every timed call (--off-cache)
  std::string first_wrong_;
};

// A program's summary rows: the table and, on rank 0, the printed line of each row as it comes.
template <typename Row>
struct SummaryRows {
  Columns<Row> columns;
  Table table;
  void add(const Session& s, const Row& r) {
    columns.append(table, r);
    if (s.rank == 0) print(columns.row_line(r));
  }

 private:
  static void print(const std::string& line) {
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  }
};

}  // namespace sp::coll
