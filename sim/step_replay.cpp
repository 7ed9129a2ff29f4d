// step_replay: a measured data-parallel training run replayed on a simulated cluster (SimGrid
// SMPI; the smpi preset builds it, scripts/simulate runs it). Compute comes from the trace — per
// measured rank and step the time before the last backward, the backward and the moments its
// buckets were ready, and the optimizer — and simulated rank r takes measured rank r mod N's.
// Communication is not taken from the trace: every bucket's allreduce runs the algorithm's own
// step program (the schedules the trainers run) on the simulated network, the way the run's
// overlap mode ran it:
//  - thread: a communication thread takes the ready buckets one after the other, each after a
//    handshake barrier; the step waits after backward for the last;
//  - progress: the compute thread starts a ready bucket (two in flight at most) and advances those
//    in flight each time backward finishes a tensor's gradient (tensor times spread evenly between
//    the buckets' ready times), then completes them after backward;
//  - none: every bucket after backward and a barrier.
// Timing only: the gradient buffers are SMPI shared memory (no real data; the schedules are
// verified by allreduce_perf under SMPI), local reductions and the progress calls take no simulated
// time. One row per case on stdout (rank 0): the measured median step (slowest rank) and, where the
// rank counts match, the prediction's error; every simulated step in the trace (kind "replay").
#include <mpi.h>
#include <simgrid/host.h>
#include <smpi/smpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/algorithms/backend.hpp"
#include "collectives/algorithms/program.hpp"
#include "core/run/error.hpp"
#include "core/run/log.hpp"
#include "core/run/options.hpp"
#include "core/run/program.hpp"
#include "core/measure/provenance.hpp"
#include "core/measure/stats.hpp"
#include "core/trace/trace.hpp"
#include "sim/replay_profile.hpp"

namespace {

using namespace sp;
using namespace sp::sim;

constexpr int kInFlight = 2;  // progress mode, as the engine (trainers/dp/reducer.hpp)

// The simulated clock; compute is time this rank's simulated core is busy.
double now() { return MPI_Wtime(); }
void busy(double seconds) {
  if (seconds > 0) smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
}
void compute_until(double t) { busy(t - now()); }

struct StepTimes {
  double step_s = 0, lead_s = 0, backward_s = 0, wait_s = 0, comm_s = 0, tail_s = 0;
};

// One rank's replay: the programs of the buckets of the case it last replayed, and their
// timing-only memory.
class Replayer {
 public:
  Replayer(const ReplayProfile& p, coll::Transport& t, MPI_Comm comm) : p_(p), t_(t) {
    MPI_Comm_dup(comm, &handshake_);
    std::size_t most = 1;
    for (const auto& rank : p_.by_rank)
      for (const ReplayStep& s : rank) {
        std::size_t total = 0;
        for (const ReplayBucket& b : s.buckets) total += std::size_t(b.numel);
        most = std::max(most, total);
      }
    grads_ = static_cast<float*>(SMPI_SHARED_MALLOC(most * sizeof(float)));
  }
  ~Replayer() {
    SMPI_SHARED_FREE(grads_);
    for (float* s : scratch_) SMPI_SHARED_FREE(s);
    MPI_Comm_free(&handshake_);
  }
  Replayer(const Replayer&) = delete;
  Replayer& operator=(const Replayer&) = delete;

  StepTimes run(const ReplayStep& s) {
    const int c = int(s.case_id);
    prepare(c, s);
    StepTimes r;
    const double t0 = now();
    compute_until(t0 + s.lead_s);
    // Progress mode: backward also holds the engine's progress calls, charged at their measured time.
    const double backward_start = now(),
                 backward_end = backward_start + s.backward_s + (p_.overlap_mode == "progress" ? s.progress_s : 0);
    double comm_end = backward_end;
    if (p_.overlap_mode == "none") {
      compute_until(backward_end);
      MPI_Barrier(handshake_);
      for (std::size_t b = 0; b < s.buckets.size(); ++b) r.comm_s += blocking(b);
      comm_end = now();
    } else if (p_.overlap_mode == "thread") {
      for (std::size_t b = 0; b < s.buckets.size(); ++b) {
        compute_until(backward_start + s.buckets[b].ready_s);  // the thread idles until it is ready
        const double t = now();
        MPI_Barrier(handshake_);
        blocking(b);
        r.comm_s += now() - t;  // the handshake and the allreduce, as the engine's comm_s
      }
      comm_end = now();
      compute_until(backward_end);
    } else {
      r.comm_s = progressed(s, backward_start, backward_end);
      comm_end = now();
    }
    r.wait_s = std::max(0.0, comm_end - backward_end);
    compute_until(std::max(now(), backward_end) + s.tail_s);
    r.lead_s = backward_start - t0;
    r.backward_s = s.backward_s;
    r.tail_s = s.tail_s;
    r.step_s = now() - t0;
    return r;
  }

 private:
  // The programs of case c's buckets (each bucket of a step in its order), built when the case
  // changes: one case's programs at a time, as at 1024 ranks a ring's take megabytes per rank.
  void prepare(int c, const ReplayStep& s) {
    if (c == programs_case_) return;
    programs_case_ = c;
    programs_.clear();
    const coll::Algorithm& a = coll::find_algorithm(p_.cases[std::size_t(c)].algorithm);
    std::size_t offset = 0;
    for (std::size_t b = 0; b < s.buckets.size(); ++b) {
      const auto numel = std::size_t(s.buckets[b].numel);
      float* at = grads_ + offset;
      const coll::AllreduceArgs call{
          at, at, numel, coll::Dtype::f32, coll::Op::sum, &t_, &workspace_, std::size_t(p_.chunk_bytes)};
      auto [transport, shape] = a.placement(call, coll::tag::kTagStride * int(b % kInFlight));
      if (transport != &t_) fail("algorithm '{}' needs a transport of its own; the replay runs MPI's", a.name);
      shape.scaled = true;  // the engine's mean
      programs_.push_back({a.plan(shape), offset});
      offset += numel;
      const std::size_t slot = b % kInFlight, need = programs_.back().program.scratch_elements;
      if (need > scratch_elements_[slot]) {
        if (scratch_[slot]) SMPI_SHARED_FREE(scratch_[slot]);
        scratch_[slot] = static_cast<float*>(SMPI_SHARED_MALLOC(need * sizeof(float)));
        scratch_elements_[slot] = need;
      }
    }
  }
  coll::Bindings bind(std::size_t b) {
    const Bucket& x = programs_[b];
    float* at = grads_ + x.offset;
    return {at, at, reinterpret_cast<std::byte*>(scratch_[b % kInFlight]), nullptr, 0, 1.0 / t_.size()};
  }
  double blocking(std::size_t b) {
    const double t = now();
    coll::run_blocking(programs_[b].program, bind(b), t_);
    return now() - t;
  }

  // Progress mode; returns the buckets' summed time in flight.
  double progressed(const ReplayStep& s, double backward_start, double backward_end) {
    const std::size_t n = s.buckets.size();
    std::array<coll::ProgressedRun, kInFlight> runs;
    std::vector<double> started(n, 0), finished(n, -1);
    std::size_t ready = 0, next = 0;
    // Advances the runs in flight (poll: testing what they wait on; else only up to it) and
    // starts bucket `next` once the bucket before it in its slot has finished.
    auto pump = [&](bool poll) {
      for (bool moved = true; moved;) {
        moved = false;
        for (std::size_t b = next >= kInFlight ? next - kInFlight : 0; b < next; ++b)
          if (finished[b] < 0 && runs[b % kInFlight].advance(poll)) finished[b] = now(), moved = true;
        if (next < ready && (next < kInFlight || finished[next - kInFlight] >= 0)) {
          runs[next % kInFlight].start(programs_[next].program, bind(next), t_);
          started[next++] = now();
          moved = true;
        }
      }
    };
    // Each progress call costs the measured calls' time spread evenly over them: the measured
    // time holds the reductions and copies they did, which the simulation itself does not charge.
    double calls = 0;
    for (const ReplayBucket& b : s.buckets) calls += std::max(1.0, b.tensors);
    const double per_call = s.progress_s / calls;
    double previous = 0, charged = 0;
    for (std::size_t b = 0; b < n; ++b) {
      const int tensors = std::max(1, int(s.buckets[b].tensors));
      for (int j = 1; j <= tensors; ++j) {
        compute_until(backward_start + charged + previous + (s.buckets[b].ready_s - previous) * j / tensors);
        if (j == tensors) ready = b + 1;
        pump(true);  // backward's progress report: the engine tests what is in flight
        busy(per_call);
        charged += per_call;
      }
      previous = s.buckets[b].ready_s;
    }
    compute_until(backward_end);
    // After backward the engine polls until every bucket is done; here the rank blocks until one
    // of the requests it would poll completes (a polling rank lets no simulated time pass).
    for (pump(false); next < n || std::any_of(finished.begin(), finished.end(), [](double f) { return f < 0; });
         pump(false)) {
      std::vector<coll::Request*> waiting;
      for (std::size_t b = next >= kInFlight ? next - kInFlight : 0; b < next; ++b)
        if (finished[b] < 0) {
          coll::Request* r = runs[b % kInFlight].waiting_on();
          if (!r) fail("step_replay: bucket {} in flight waits on nothing", b);
          waiting.push_back(r);
        }
      t_.wait_any(waiting);
    }
    // The engine's "every rank finished backward" (a nonblocking barrier it completes here): a
    // barrier, as SMPI's nonblocking collectives are linear in the ranks.
    MPI_Barrier(handshake_);
    double in_flight = 0;
    for (std::size_t b = 0; b < n; ++b) in_flight += finished[b] - started[b];
    return in_flight;
  }

  struct Bucket {
    coll::Program program;
    std::size_t offset = 0;
  };
  const ReplayProfile& p_;
  coll::Transport& t_;
  MPI_Comm handshake_ = MPI_COMM_NULL;
  coll::Workspace workspace_;
  float* grads_ = nullptr;
  std::array<float*, kInFlight> scratch_{};
  std::array<std::size_t, kInFlight> scratch_elements_{};
  std::vector<Bucket> programs_;  // of case programs_case_
  int programs_case_ = -1;
};

// Rank 0 reads the trace; every rank gets the profile (one line on every rank if it cannot be read).
ReplayProfile shared_profile(Session& s, const std::string& path) {
  std::vector<double> numbers;
  std::string text, error;
  if (s.rank == 0) try {
      numbers = flatten(read_replay_profile(path), text);
    } catch (const std::exception& e) {
      error = e.what();
    }
  fail_together(s.comm, error);
  std::array<unsigned long long, 2> sizes{numbers.size(), text.size()};
  MPI_Bcast(sizes.data(), 2, MPI_UNSIGNED_LONG_LONG, 0, s.comm);
  numbers.resize(sizes[0]);
  text.resize(sizes[1]);
  MPI_Bcast(numbers.data(), int(sizes[0]), MPI_DOUBLE, 0, s.comm);
  MPI_Bcast(text.data(), int(sizes[1]), MPI_CHAR, 0, s.comm);
  return unflatten(numbers, text);
}

double median_of(const std::vector<double>& v) { return v.empty() ? NAN : summarize(v).median; }

int run(Session& s) {
  std::string trace_in;
  RunOptions o;
  std::size_t max_steps = 0;
  CLI::App app{"step_replay: a measured data-parallel run (a train trace) replayed on a simulated cluster",
               "step_replay"};
  app.add_option("trace", trace_in, "the measured run: a gpt_train or resnet_train trace")->required();
  int only_case = -1;
  app.add_option("--steps", max_steps, "replay the first N summarised steps (of --case; 0 = all)")
      ->check(CLI::Range(0, 100000000));
  app.add_option("--case", only_case, "replay the steps of this case of the measured run only (its cases table)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("-o,--trace", o.trace, "HDF5 trace of the replay (default traces/step_replay-<time>.h5)");
  app.add_flag("-q,--quiet", o.quiet, "only the table");
  if (!o.parse(app, s)) return 0;
  if (!kSimulatedBuild) throw UsageError("step_replay runs on a simulated cluster: build it with the smpi preset");

  ReplayProfile p = shared_profile(s, trace_in);
  for (const ReplayCase& c : p.cases) try {
      const coll::Algorithm& a = coll::find_algorithm(c.algorithm);
      if (!a.is_schedule() && a.transport != "mpi")
        throw UsageError(
            fmt::format("algorithm '{}' of {} does not run in the simulated build", c.algorithm, p.source));
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {
      throw UsageError(fmt::format("{}: algorithm '{}' cannot be replayed: {}", p.source, c.algorithm, e.what()));
    }
  if (only_case >= int(p.cases.size()))
    throw UsageError(fmt::format("--case {}: {} has {} case(s)", only_case, p.source, p.cases.size()));
  // The summarised steps replayed: of --case only, the first --steps of them.
  std::vector<std::size_t> chosen;
  for (std::size_t k = 0; k < p.steps(); ++k)
    if ((only_case < 0 || int(p.by_rank[0][k].case_id) == only_case) && (!max_steps || chosen.size() < max_steps))
      chosen.push_back(k);
  if (chosen.empty()) throw UsageError(fmt::format("--case {}: no summarised step of {} ran it", only_case, p.source));
  const std::size_t steps = chosen.size();
  const auto& mine = p.by_rank[std::size_t(s.rank % p.ranks)];

  coll::Backends backends = coll::BackendOption{}.make(s.comm);
  Provenance prov = collect_provenance(s);
  prov.add("replay_source", p.source);
  TraceWriter trace(s, trace_output_path(o.trace, prov), "replay", prov);
  log::info("replaying {} step(s) of {} ({} measured ranks, overlap {}) on {} simulated ranks; trace {}", steps,
            p.source, p.ranks, p.overlap_mode, s.size, trace.final_path().string());

  Table rows;
  auto& step_col = rows.ints("step", "", "the measured step replayed");
  auto& case_col = rows.ints("case", "", "row of cases");
  auto& source_col = rows.ints("source_rank", "", "the measured rank whose compute this rank replayed");
  auto& step_s = rows.reals("step_s", "s", "simulated step time");
  auto& lead_s = rows.reals("lead_s", "s", "before the last backward (measured)");
  auto& backward_s = rows.reals("backward_s", "s", "the last backward's compute (measured)");
  auto& wait_s = rows.reals("wait_s", "s", "simulated wait for the buckets after backward (exposed communication)");
  auto& comm_s = rows.reals("comm_s", "s", "simulated: the buckets' time in flight, summed");
  auto& tail_s = rows.reals("tail_s", "s", "optimizer (measured)");
  auto& measured_s = rows.reals("measured_step_s", "s", "the source rank's measured step time");
  Replayer replay(p, backends.backend(), s.comm);
  MPI_Barrier(s.comm);
  for (std::size_t k = 0; k < steps; ++k) {
    const ReplayStep& step = mine[chosen[k]];
    const StepTimes t = replay.run(step);
    step_col.push_back(std::int64_t(step.step));
    case_col.push_back(std::int64_t(step.case_id));
    source_col.push_back(s.rank % p.ranks);
    step_s.push_back(t.step_s), lead_s.push_back(t.lead_s), backward_s.push_back(t.backward_s);
    wait_s.push_back(t.wait_s), comm_s.push_back(t.comm_s), tail_s.push_back(t.tail_s);
    measured_s.push_back(step.measured_step_s);
  }
  // Each step's time is its slowest rank's, as measured.
  std::vector<double> slowest(steps), wait_max(steps);
  MPI_Reduce(step_s.data(), slowest.data(), int(steps), MPI_DOUBLE, MPI_MAX, 0, s.comm);
  MPI_Reduce(wait_s.data(), wait_max.data(), int(steps), MPI_DOUBLE, MPI_MAX, 0, s.comm);
  MPI_Bcast(slowest.data(), int(steps), MPI_DOUBLE, 0, s.comm);
  MPI_Bcast(wait_max.data(), int(steps), MPI_DOUBLE, 0, s.comm);

  Table cases;
  auto& c_id = cases.ints("case", "", "the measured run's case");
  auto& c_algorithm = cases.strings("algorithm", "allreduce algorithm of the buckets");
  auto& c_cap = cases.strings("bucket_cap", "bucket cap label");
  auto& c_buckets = cases.ints("buckets", "", "buckets per step");
  auto& c_steps = cases.ints("steps", "", "steps replayed");
  auto& c_measured =
      cases.reals("measured_median_s", "s", "median over the steps of the slowest measured rank's step time");
  auto& c_predicted =
      cases.reals("predicted_median_s", "s", "median over the steps of the slowest simulated rank's step time");
  auto& c_wait =
      cases.reals("predicted_wait_median_s", "s", "median over the steps of the longest simulated wait after backward");
  auto& c_measured_wait =
      cases.reals("measured_wait_median_s", "s", "median over the steps of the longest measured wait after backward");
  auto& c_error = cases.reals("error", "", "predicted / measured - 1 (NaN when the rank counts differ)");
  const bool same_ranks = s.size == p.ranks;
  std::string table = simulation_banner();
  table +=
      fmt::format("# step_replay: {} ({} measured ranks, {}, overlap {}) on {} simulated ranks; {} step(s)\n", p.source,
                  p.ranks, p.machine.empty() ? "machine not recorded" : p.machine, p.overlap_mode, s.size, steps);
  table += "# compute as measured; communication simulated (the algorithms' programs); timing only\n";
  table += "# step: median over the steps of the slowest rank's; wait: of the longest wait after backward\n";
  table +=
      fmt::format("# {:>4} {:>13} {:>8} {:>7} {:>5} {:>13} {:>13} {:>9} {:>12} {:>12}\n", "case", "algorithm", "cap",
                  "buckets", "steps", "measured(ms)", "predicted(ms)", "error(%)", "m.wait(ms)", "p.wait(ms)");
  for (std::size_t c = 0; c < p.cases.size(); ++c) {
    std::vector<double> measured, predicted, waits, measured_waits;
    std::int64_t buckets = 0;
    for (std::size_t k = 0; k < steps; ++k)
      if (std::size_t(mine[chosen[k]].case_id) == c) {
        measured.push_back(p.measured_step_s(chosen[k]));
        measured_waits.push_back(p.measured_wait_s(chosen[k]));
        predicted.push_back(slowest[k]);
        waits.push_back(wait_max[k]);
        buckets = std::int64_t(mine[chosen[k]].buckets.size());
      }
    if (predicted.empty()) continue;
    const double m = median_of(measured), q = median_of(predicted), w = median_of(waits),
                 mw = median_of(measured_waits);
    const double error = same_ranks ? q / m - 1 : NAN;
    c_id.push_back(std::int64_t(c));
    c_algorithm.push_back(p.cases[c].algorithm);
    c_cap.push_back(p.cases[c].bucket_cap);
    c_buckets.push_back(buckets);
    c_steps.push_back(std::int64_t(predicted.size()));
    c_measured.push_back(m), c_predicted.push_back(q), c_wait.push_back(w), c_error.push_back(error);
    c_measured_wait.push_back(mw);
    table += fmt::format("  {:>4} {:>13} {:>8} {:>7} {:>5} {:>13.3f} {:>13.3f} {:>9} {:>12.3f} {:>12.3f}\n", c,
                         p.cases[c].algorithm, p.cases[c].bucket_cap, buckets, predicted.size(), m * 1e3, q * 1e3,
                         same_ranks ? fmt::format("{:+.1f}", error * 100) : std::string("-"), mw * 1e3, w * 1e3);
  }
  if (s.rank == 0) std::fputs(table.c_str(), stdout);

  trace.set_attribute("source_trace", p.source);
  trace.set_attribute("source_ranks", std::int64_t(p.ranks));
  trace.set_attribute("source_machine", p.machine);
  trace.set_attribute("overlap_mode", p.overlap_mode);
  trace.set_attribute("chunk_bytes", std::int64_t(p.chunk_bytes));
  trace.write_table("steps", rows, TableScope::per_rank, "one row per rank and replayed step");
  trace.write_table("cases", cases, TableScope::shared, "one row per case of the measured run");
  trace.commit();
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return sp::run_program(argc, argv, "step_replay", MPI_THREAD_SINGLE, run); }
