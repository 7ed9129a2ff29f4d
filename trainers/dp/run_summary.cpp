#include "trainers/dp/run_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "core/run/error.hpp"
#include "core/measure/stats.hpp"

namespace sp::dp {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Every rank's values of a per-step series, rank-major: out[r * n + i].
std::vector<double> gather_series(const std::vector<double>& local, MPI_Comm comm) {
  int nranks = 1;
  MPI_Comm_size(comm, &nranks);
  std::vector<double> out(local.size() * std::size_t(nranks));
  SP_MPI_CHECK(
      MPI_Allgather(local.data(), int(local.size()), MPI_DOUBLE, out.data(), int(local.size()), MPI_DOUBLE, comm));
  return out;
}

double mean_of(const std::vector<double>& v) {
  return v.empty() ? kNaN : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

const std::vector<double>& reals_of(const Table& t, const char* name) {
  return std::get<std::vector<double>>(t.find(name)->values);
}
const std::vector<std::int64_t>& ints_of(const Table& t, const char* name) {
  return std::get<std::vector<std::int64_t>>(t.find(name)->values);
}

// Three columns summarising a per-step time series over the summarised steps, <name>_mean_s,
// <name>_median_s and <name>_min_s (NaN where no step was summarised).
struct StepTimeColumns {
  StepTimeColumns(Table& t, const std::string& name, const std::string& mean_doc, const std::string& median_doc,
                  const std::string& min_doc)
      : mean(t.reals(name + "_mean_s", "s", mean_doc)),
        median(t.reals(name + "_median_s", "s", median_doc)),
        min(t.reals(name + "_min_s", "s", min_doc)) {}
  void push(const std::vector<double>& per_step) {
    const Summary s = summarize(per_step);
    mean.push_back(per_step.empty() ? kNaN : s.mean);
    median.push_back(per_step.empty() ? kNaN : s.median);
    min.push_back(per_step.empty() ? kNaN : s.min);
  }
  std::vector<double>& mean;
  std::vector<double>& median;
  std::vector<double>& min;
};

// The run's closing line of one case, e.g. "ring cap 25 (2 buckets): 408.1 ms/iteration over 11 steps,
// compute 335.0 ms, exposed 7.10 ms (waiting for peers 5.00 + after all were ready 2.10) of a 7.00 ms
// no-overlap allreduce, hidden -1 %, imbalance 3.0 %". Communication advanced from inside backward
// (progress mode) is named, and the hidden fraction given only with several ranks.
struct CaseLine {
  std::string name;  // "ring cap 25"
  std::int64_t buckets = 0;
  std::size_t steps = 0;
  double iteration_s = 0, compute_s = 0, exposed_s = 0, exposed_peers_s = 0, after_ready_s = 0, progress_s = 0;
  double reference_s = 0, hidden = 0, imbalance = 0;
  int nranks = 1;
  bool no_comm = false;  // --no-comm: no case, no communication

  std::string text() const {
    if (steps == 0) return name + ": no summarised steps";
    if (no_comm)
      return fmt::format(
          "no communication (--no-comm): {:.1f} ms/iteration over {} steps, compute {:.1f} ms, "
          "imbalance {:.1f} %",
          iteration_s * 1e3, steps, compute_s * 1e3, imbalance * 100);
    std::string line = fmt::format(
        "{} ({} buckets): {:.1f} ms/iteration over {} steps, compute {:.1f} ms, exposed {:.2f} ms (waiting for "
        "peers {:.2f} + after all were ready {:.2f}) of a {:.2f} ms no-overlap allreduce",
        name, buckets, iteration_s * 1e3, steps, compute_s * 1e3, exposed_s * 1e3, exposed_peers_s * 1e3,
        after_ready_s * 1e3, reference_s * 1e3);
    if (progress_s > 0) line += fmt::format(", {:.2f} ms advancing it inside backward", progress_s * 1e3);
    if (nranks > 1) line += fmt::format(", hidden {:.0f} %", hidden * 100);
    return line + fmt::format(", imbalance {:.1f} %", imbalance * 100);
  }
};

// Per case: iteration time (slowest rank per step), compute, communication, hidden fraction.
void add_cases(RunSummary& out, const Table& iterations, const DataParallelPlan& plan,
               const coll::GradientLayout& layout, const std::vector<double>& reference_comm_s, MPI_Comm comm) {
  int nranks = 1;
  MPI_Comm_size(comm, &nranks);
  const auto& in = ints_of(iterations, "in_summary");
  const auto& case_col = ints_of(iterations, "case");
  const auto all_step = gather_series(reals_of(iterations, "step_s"), comm);
  const auto all_compute = gather_series(reals_of(iterations, "compute_s"), comm);
  const auto all_exposed = gather_series(reals_of(iterations, "exposed_comm_s"), comm);
  const auto all_comm = gather_series(reals_of(iterations, "comm_s"), comm);
  const auto all_peers = gather_series(reals_of(iterations, "peers_s"), comm);
  const auto all_transfer = gather_series(reals_of(iterations, "transfer_s"), comm);
  const auto all_exposed_peers = gather_series(reals_of(iterations, "exposed_wait_peers_s"), comm);
  const auto all_after_ready = gather_series(reals_of(iterations, "exposed_after_ready_s"), comm);
  const auto all_progress = gather_series(reals_of(iterations, info(Phase::progress).column), comm);
  const std::size_t n = in.size();

  Table& cases = out.cases;
  auto& c_id = cases.ints("case", "", "case id (iterations.case)");
  auto& c_alg = cases.strings("algorithm", "gradient allreduce algorithm");
  auto& c_cap = cases.strings("bucket_cap", "bucket cap label: MiB, 'tensor' or 'all'");
  auto& c_cap_bytes = cases.ints("cap_bytes", "B", "cap of buckets after the first");
  auto& c_nb = cases.ints("buckets", "", "number of buckets");
  auto& c_steps = cases.ints("steps", "", "summarised steps of this case");
  StepTimeColumns c_iter(cases, "iteration", "mean over steps of the slowest rank's step time",
                         "median over steps of the slowest rank's step time", "fastest step (slowest rank)");
  auto& c_compute = cases.reals("compute_mean_s", "s", "forward + backward + optimizer, mean over steps and ranks");
  auto& c_comm = cases.reals("comm_mean_s", "s",
                             "sum over buckets of started-to-finished time per step (peers + transfer; progress mode: "
                             "up to 2 buckets in flight are each counted), mean over steps and ranks");
  auto& c_peers = cases.reals(
      "peers_mean_s", "s",
      "of it, thread mode's handshake wait for peers per step (0 in other modes), mean over steps and ranks");
  auto& c_transfer =
      cases.reals("transfer_mean_s", "s", "of it, the allreduce calls per step, mean over steps and ranks");
  auto& c_exposed = cases.reals("exposed_comm_mean_s", "s",
                                "exposed communication per step (the wait after backward), mean over steps and ranks");
  auto& c_exposed_peers =
      cases.reals("exposed_wait_peers_mean_s", "s",
                  "of exposed_comm_mean_s: waiting for the slowest peer's backward, mean over steps and ranks");
  auto& c_after_ready =
      cases.reals("exposed_after_ready_mean_s", "s",
                  "of exposed_comm_mean_s: communication after every rank was ready, mean over steps and ranks");
  auto& c_progress =
      cases.reals("progress_mean_s", "s",
                  "progress mode: advancing buckets from inside backward per step, mean over steps and ranks");
  auto& c_ref = cases.reals(
      "reference_comm_s", "s",
      "the same buckets allreduced without overlap in this run after the last step: mean over iterations and ranks");
  auto& c_hidden = cases.reals("hidden_fraction", "",
                               "1 - exposed_comm_mean_s / reference_comm_s (negative: overlapping cost more than it "
                               "hid); NaN with one rank (nothing to hide)");
  auto& c_imb = cases.reals("compute_imbalance", "", "mean over steps of (max - min) / mean compute time across ranks");
  auto& c_slow = cases.ints("slowest_rank", "", "rank most often slowest in compute");
  auto& c_rate = cases.reals("samples_per_s", "", "global batch rows / iteration_mean_s");
  for (std::size_t c = 0; c < plan.cases.size(); ++c) {
    std::vector<double> iter, compute, comm_busy, peers, transfer, exposed, exposed_peers, after_ready, progress, imb;
    std::vector<int> slowest_count(std::size_t(nranks), 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (!in[i] || case_col[i] != std::int64_t(c)) continue;
      double mx = 0, cmin = 1e300, cmax = -1, csum = 0;
      int slow = 0;
      for (int r = 0; r < nranks; ++r) {
        const std::size_t k = std::size_t(r) * n + i;
        mx = std::max(mx, all_step[k]);
        compute.push_back(all_compute[k]);
        comm_busy.push_back(all_comm[k]);
        exposed.push_back(all_exposed[k]);
        peers.push_back(all_peers[k]);
        transfer.push_back(all_transfer[k]);
        exposed_peers.push_back(all_exposed_peers[k]);
        after_ready.push_back(all_after_ready[k]);
        progress.push_back(all_progress[k]);
        if (all_compute[k] > cmax) cmax = all_compute[k], slow = r;
        cmin = std::min(cmin, all_compute[k]);
        csum += all_compute[k];
      }
      iter.push_back(mx);
      imb.push_back(csum > 0 ? (cmax - cmin) / (csum / nranks) : kNaN);
      ++slowest_count[std::size_t(slow)];
    }
    const ReductionCase& rc = plan.cases[c];
    c_id.push_back(std::int64_t(c));
    c_alg.emplace_back(rc.algorithm->name);
    c_cap.push_back(rc.cap.label);
    c_cap_bytes.push_back(std::int64_t(rc.cap.cap_bytes));
    c_nb.push_back(std::int64_t(bucket_slices(layout, rc.cap).size()));
    c_steps.push_back(std::int64_t(iter.size()));
    c_iter.push(iter);
    c_compute.push_back(mean_of(compute));
    c_comm.push_back(mean_of(comm_busy));
    c_peers.push_back(mean_of(peers));
    c_transfer.push_back(mean_of(transfer));
    c_exposed.push_back(mean_of(exposed));
    c_exposed_peers.push_back(mean_of(exposed_peers));
    c_after_ready.push_back(mean_of(after_ready));
    c_progress.push_back(mean_of(progress));
    const double ref = c < reference_comm_s.size() ? reference_comm_s[c] : kNaN;
    c_ref.push_back(ref);
    // One rank has nothing to hide: its "hidden" fraction would be noise over a copy.
    c_hidden.push_back(ref > 0 && nranks > 1 ? 1.0 - c_exposed.back() / ref : kNaN);
    c_imb.push_back(mean_of(imb));
    c_slow.push_back(std::max_element(slowest_count.begin(), slowest_count.end()) - slowest_count.begin());
    const double iteration_s = c_iter.mean.back();
    c_rate.push_back(iter.empty() ? kNaN : double(plan.global_batch) / iteration_s);
    out.case_lines.push_back(CaseLine{.name = fmt::format("{} cap {}", rc.algorithm->name, rc.cap.label),
                                      .buckets = c_nb.back(),
                                      .steps = iter.size(),
                                      .iteration_s = iteration_s,
                                      .compute_s = c_compute.back(),
                                      .exposed_s = c_exposed.back(),
                                      .exposed_peers_s = c_exposed_peers.back(),
                                      .after_ready_s = c_after_ready.back(),
                                      .progress_s = c_progress.back(),
                                      .reference_s = ref,
                                      .hidden = c_hidden.back(),
                                      .imbalance = c_imb.back(),
                                      .nranks = nranks,
                                      .no_comm = plan.no_comm}
                                 .text());
  }
}

// Per step phase and the whole step: wall time (mean over ranks; the step: slowest rank), main-
// thread CPU time (from this rank's samples, mean over ranks) and share of the step.
void add_phase_summary(RunSummary& out, const StepLog& log, MPI_Comm comm) {
  int nranks = 1;
  MPI_Comm_size(comm, &nranks);
  const Table& iterations = log.iterations();
  const Table samples = log.samples_table();
  const auto& in = ints_of(iterations, "in_summary");
  const auto& it_step = ints_of(iterations, "step");
  const std::size_t n = in.size();
  const std::size_t steps_local = std::size_t(std::count(in.begin(), in.end(), 1));
  const auto& s_it = ints_of(samples, "iteration");
  const auto& s_ph = ints_of(samples, "phase");
  const auto& s_cpu = reals_of(samples, "cpu_s");

  Table& summary = out.summary;
  auto& sm_phase = summary.strings("phase", "phase name, or 'step' for the whole step");
  auto& sm_n = summary.ints("steps", "", "summarised steps");
  StepTimeColumns sm_wall(summary, "wall", "mean wall time per step (mean over ranks; step: slowest rank)",
                          "median over steps", "fastest step");
  auto& sm_cpu = summary.reals("cpu_mean_s", "s", "mean main-thread CPU time per step (mean over ranks)");
  auto& sm_share = summary.reals("share", "", "wall_mean_s / the step's wall_mean_s");

  // One row per step phase, then the step (is_step): its column is step_s, its CPU every main-
  // thread phase's, and across ranks it takes the slowest instead of the mean.
  for (std::size_t row = 0; row <= kStepPhases.size(); ++row) {
    const bool is_step = row == kStepPhases.size();
    const char* column = is_step ? "step_s" : info(kStepPhases[row]).column;
    const auto all = gather_series(reals_of(iterations, column), comm);
    std::vector<double> per_step;
    for (std::size_t i = 0; i < n; ++i) {
      if (!in[i]) continue;
      double acc = 0.0;
      for (int r = 0; r < nranks; ++r) {
        const double v = all[std::size_t(r) * n + i];
        acc = is_step ? std::max(acc, v) : acc + v / nranks;
      }
      per_step.push_back(acc);
    }
    double cpu_local = 0;
    for (std::size_t k = 0; k < s_it.size(); ++k) {
      const auto pos = std::size_t(std::lower_bound(it_step.begin(), it_step.end(), s_it[k]) - it_step.begin());
      if (pos >= n || !in[pos]) continue;
      const Phase p = Phase(s_ph[k]);
      if (is_step ? in_step_time(p) : p == kStepPhases[row]) cpu_local += s_cpu[k];
    }
    const double cpu_mean = steps_local ? mean_across_ranks(cpu_local / double(steps_local), comm) : kNaN;
    sm_phase.push_back(is_step ? "step" : info(kStepPhases[row]).name);
    sm_n.push_back(std::int64_t(per_step.size()));
    sm_wall.push(per_step);
    sm_cpu.push_back(cpu_mean);
  }
  for (double m : sm_wall.mean) sm_share.push_back(m / sm_wall.mean.back());
}

}  // namespace

RunSummary summarize_run(const StepLog& log, const DataParallelPlan& plan, const coll::GradientLayout& layout,
                         const std::vector<double>& reference_comm_s, MPI_Comm comm) {
  RunSummary out;
  add_cases(out, log.iterations(), plan, layout, reference_comm_s, comm);
  add_phase_summary(out, log, comm);
  return out;
}

}  // namespace sp::dp
