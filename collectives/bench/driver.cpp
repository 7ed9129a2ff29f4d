#include "collectives/bench/driver.hpp"

#include <algorithm>
#include <cstdio>

#include "collectives/transports/timing_only.hpp"

#include "core/trace/json_report.hpp"
#include "core/run/log.hpp"

namespace sp::coll {

BenchmarkRun::BenchmarkRun(Session& s, const RunOptions& ro, std::string program, std::string kind, Provenance prov,
                           std::vector<std::pair<std::string, std::string>> phases, int device_phase)
    : s_(s),
      ro_(ro),
      program_(std::move(program)),
      kind_(std::move(kind)),
      prov_(std::move(prov)),
      private_bytes_(simulated_private_bytes()),
      trace_(s, trace_output_path(ro.trace, prov_), kind_, prov_),
      samples_(std::move(phases)),
      device_phase_(device_phase) {}

CaseResult BenchmarkRun::run_case(BenchCase& c, std::int64_t id, int iters, int warmup, const std::string& label) {
  TimedRun r = time_calls(c, {iters, warmup, ro_.barrier(), ro_.off_cache}, s_.comm);
  evicted_bytes_ += r.evicted_bytes;
  // A timing-only case's buffers hold no data (every simulated rank maps the same memory).
  const bool timing_only = !c.transport().holds_data();
  long long wrong = timing_only ? 0 : c.verify();
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, s_.comm));
  if (timing_only) {
    wrong = -1;
    ++timing_only_cases_;
  }
  CaseResult result{id, iters, warmup, case_stats(r, s_.comm, c.takes_part()), wrong};
  for (std::size_t i = 0; i < r.samples.size() && c.takes_part(); ++i)
    samples_.add(id, static_cast<std::int64_t>(i), 0, -1, r.samples[i]);
  if (device_phase_ >= 0)
    for (std::size_t i = 0; i < r.device_s.size(); ++i)
      samples_.add(id, static_cast<std::int64_t>(i), device_phase_, -1, {r.samples[i].start_s, r.device_s[i], 0.0});
  if (wrong > 0 && first_wrong_.empty()) first_wrong_ = label;
  total_wrong_ += std::max(wrong, 0LL);
  return result;
}

int BenchmarkRun::finish(const NamedTable& summary, const std::vector<NamedTable>& extra,
                         const std::string& samples_description, const Table& ranks,
                         const std::vector<NamedTable>& json_extra) {
  trace_.write_table(summary.name, *summary.table, TableScope::shared, summary.description);
  for (const NamedTable& t : extra) trace_.write_table(t.name, *t.table, TableScope::shared, t.description);
  trace_.write_table("phases", samples_.phases_table(), TableScope::shared, "phase ids used in samples");
  trace_.write_table("samples", samples_.samples_table(), TableScope::per_rank, samples_description);
  trace_.write_table("ranks", ranks, TableScope::per_rank, "rank -> host -> core map");
  trace_.set_attribute("wrong_elements", static_cast<std::int64_t>(total_wrong_));
  trace_.set_attribute("off_cache_evicted_bytes", static_cast<std::int64_t>(evicted_bytes_));
  if (kSimulatedBuild) {
    trace_.set_attribute("timing_only_cases", timing_only_cases_);
    trace_.set_attribute("simulated_private_bytes", static_cast<std::int64_t>(private_bytes_));
  }
  const auto path = trace_.commit();
  if (s_.rank == 0) {
    std::printf("# trace: %s\n", path.string().c_str());
    std::fflush(stdout);
  }
  if (total_wrong_ > 0) {
    if (s_.rank == 0)
      std::fprintf(stderr, "%s: error: verification failed: %lld wrong element(s), first in %s\n", program_.c_str(),
                   total_wrong_, first_wrong_.c_str());
    return 1;
  }
  if (s_.rank == 0 && !ro_.json.empty()) {
    std::vector<std::pair<std::string, const Table*>> tables{{summary.name, summary.table}};
    for (const NamedTable& t : json_extra) tables.emplace_back(t.name, t.table);
    write_json_report(ro_.json, kind_, prov_, path, tables);
  }
  return 0;
}

}  // namespace sp::coll
