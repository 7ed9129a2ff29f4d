#include "core/measure/samples.hpp"

#include <omp.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>

#include "core/run/error.hpp"
#include "core/measure/provenance.hpp"

namespace sp {

SampleLog::SampleLog(std::vector<std::pair<std::string, std::string>> phases) : phases_(std::move(phases)) {}

int SampleLog::phase_id(const std::string& name) const {
  for (std::size_t i = 0; i < phases_.size(); ++i)
    if (phases_[i].first == name) return static_cast<int>(i);
  fail("unknown phase '{}'", name);
}

void SampleLog::reserve(std::size_t n) {
  for (auto* v : {&case_, &iteration_, &phase_, &bucket_}) v->reserve(n);
  for (auto* v : {&start_, &wall_, &cpu_}) v->reserve(n);
}

void SampleLog::add(std::int64_t case_id, std::int64_t iteration, int phase, std::int64_t bucket,
                    const PhaseSample& s) {
  case_.push_back(case_id);
  iteration_.push_back(iteration);
  phase_.push_back(phase);
  bucket_.push_back(bucket);
  start_.push_back(s.start_s);
  wall_.push_back(s.wall_s);
  cpu_.push_back(s.cpu_s);
}

Table SampleLog::samples_table() const {
  Table t;
  t.ints("case", "", "row of the summary table this sample belongs to") = case_;
  t.ints("iteration", "", "timed iteration index (warm-up excluded)") = iteration_;
  t.ints("phase", "", "row of the phases table") = phase_;
  t.ints("bucket", "", "gradient bucket index, -1 if not a bucket allreduce") = bucket_;
  t.reals("start_s", "s", "start time on this rank's own monotonic clock (compare within a rank only)") = start_;
  t.reals("wall_s", "s", "wall-clock duration") = wall_;
  t.reals("cpu_s", "s", "CPU time of the timing thread during the phase") = cpu_;
  return t;
}

Table SampleLog::phases_table() const {
  Table t;
  auto& name = t.strings("name", "phase name");
  auto& desc = t.strings("description", "what the phase covers");
  for (auto& [n, d] : phases_) {
    name.push_back(n);
    desc.push_back(d);
  }
  return t;
}

Table rank_map_row() {
  Table t;
  // Virtual SLURM nodes on one host share its host name: the node the launcher placed the rank
  // on (SLURMD_NODENAME, set by slurmd for every task) tells them apart.
  const char* node = std::getenv("SLURMD_NODENAME");
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  t.strings("host", "host name").push_back(host_name());
  t.strings("node", "SLURM node (SLURMD_NODENAME) or, outside SLURM, the host name")
      .push_back(node && *node ? node : host_name());
  t.ints("pid", "", "process id").push_back(getpid());
  t.ints("cpu_at_start", "", "core the rank was running on at start (sched_getcpu)").push_back(sched_getcpu());
  t.strings("cpu_affinity", "cores the rank may run on").push_back(cpu_affinity_list());
  t.ints("omp_threads", "", "omp_get_max_threads()").push_back(omp_get_max_threads());
  t.ints("peak_rss_bytes", "B", "peak resident memory of the rank's process so far (getrusage ru_maxrss)")
      .push_back(static_cast<std::int64_t>(usage.ru_maxrss) * 1024);
  return t;
}

}  // namespace sp
