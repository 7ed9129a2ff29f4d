#include "trainers/dp/engine.hpp"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "core/log.hpp"
#include "core/stats.hpp"
#include "core/timer.hpp"

namespace sp::dp {

namespace {

enum Phase { kData = 0, kForward, kBackward, kWait, kOptimizer, kAverage, kValidation, kAllreduce };

std::atomic<int> g_stop_signal{0};
extern "C" void on_stop_signal(int sig) { g_stop_signal.store(sig); }

double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Every rank's values of a per-step series, rank-major: out[r * n + i].
std::vector<double> gather_series(const std::vector<double>& local, MPI_Comm comm) {
  int nranks = 1;
  MPI_Comm_size(comm, &nranks);
  std::vector<double> out(local.size() * std::size_t(nranks));
  SP_MPI_CHECK(MPI_Allgather(local.data(), int(local.size()), MPI_DOUBLE, out.data(), int(local.size()), MPI_DOUBLE, comm));
  return out;
}

const std::vector<double>& reals_of(const Table& t, const char* name) {
  return std::get<std::vector<double>>(t.find(name)->values);
}
const std::vector<std::int64_t>& ints_of(const Table& t, const char* name) {
  return std::get<std::vector<std::int64_t>>(t.find(name)->values);
}

}  // namespace

DataParallelEngine::DataParallelEngine(const Session& session, const DataParallelPlan& plan, float* params,
                                       float* grads, const coll::GradientLayout& layout, int first_step)
    : session_(session),
      plan_(plan),
      params_(params),
      grads_(grads),
      numel_(layout.total_numel()),
      layout_(layout),
      first_step_(first_step),
      reducer_(session.comm, grads, layout),
      samples_({{"data", "load the micro-batch"},
                {"forward", "forward pass incl. loss"},
                {"backward", "zero the gradients (first micro-batch) + backward; bucket allreduces overlap it"},
                {"wait", "wait for the outstanding bucket allreduces after backward (exposed communication)"},
                {"optimizer", "gradient-norm clipping + optimizer update"},
                {"average", "local SGD: parameter averaging across ranks (exposed communication)"},
                {"validation", "validation loss pass (not part of the step time)"},
                {"allreduce", "one bucket's allreduce on the communication thread (bucket column; cpu_s of that thread)"}}) {
  if (session.size > 1 && session.thread_level < MPI_THREAD_SERIALIZED)
    fail("the data-parallel engine needs MPI_THREAD_SERIALIZED, MPI provides level {}", session.thread_level);
  SP_MPI_CHECK(MPI_Comm_dup(session.comm, &comm_));
  SP_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
}

DataParallelEngine::~DataParallelEngine() { MPI_Comm_free(&comm_); }

int DataParallelEngine::case_of(int step) const {
  return int((step - first_step_) % int(plan_.cases.size()));
}

void DataParallelEngine::broadcast_parameters() {
  const std::size_t chunk = std::size_t(1) << 28;
  for (std::size_t o = 0; o < numel_; o += chunk)
    SP_MPI_CHECK(MPI_Bcast(params_ + o, int(std::min(chunk, numel_ - o)), MPI_FLOAT, 0, comm_));
}

std::uint64_t DataParallelEngine::parameter_hash() const {
  std::uint64_t h = 1469598103934665603ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(params_);
  for (std::size_t i = 0; i < numel_ * sizeof(float); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

void DataParallelEngine::check_in_sync(int step) {
  const std::uint64_t h = parameter_hash();
  std::uint64_t lo = h, hi = h;
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, comm_));
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, comm_));
  if (lo != hi)
    throw CollectiveError(fmt::format("parameters differ across ranks after step {} (hashes {:016x} to {:016x})", step, lo, hi));
}

void DataParallelEngine::install_stop_handlers() {
  std::signal(SIGUSR1, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

int DataParallelEngine::end_of_step(int step, const StepReport& report) {
  if (plan_.check_sync_every > 0 && step % plan_.check_sync_every == 0 && (plan_.local_sgd == 0 || report.averaged))
    check_in_sync(step);
  int sig = g_stop_signal.load();
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, comm_));
  return sig;
}

void DataParallelEngine::end_of_run(int last_step, bool interrupted) {
  if (plan_.local_sgd > 0 && interrupted) broadcast_parameters();
  check_in_sync(last_step);
  measure_reference_communication();
}

void DataParallelEngine::measure_reference_communication() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  reference_comm_s_.assign(plan_.cases.size(), nan);
  if (plan_.local_sgd > 0) return;  // no bucketed allreduce to compare with
  // The gradients are the trainer's; the reference only needs buffers of their size and layout.
  const std::vector<float> saved(grads_, grads_ + numel_);
  for (std::size_t c = 0; c < plan_.cases.size(); ++c) {
    const ReductionCase& rc = plan_.cases[c];
    reducer_.configure(*rc.algorithm, rc.cap, plan_.chunk_bytes);
    configured_case_ = int(c);
    double total = 0;
    for (int i = 0; i <= kReferenceIterations; ++i) {  // iteration 0 warms up
      SP_MPI_CHECK(MPI_Barrier(comm_));
      reducer_.begin(1.0f, /*overlap=*/false, /*verify=*/false);
      const double t = reducer_.finish();
      if (i > 0) total += t;
    }
    reference_comm_s_[c] = mean_over_ranks(total / kReferenceIterations);
  }
  std::copy(saved.begin(), saved.end(), grads_);
}

double DataParallelEngine::mean_over_ranks(double local) const {
  double sum = local;
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, comm_));
  return sum / session_.size;
}

void DataParallelEngine::average_parameters(bool verify) {
  std::vector<double> before;
  if (verify) before.assign(params_, params_ + numel_);
  const ReductionCase& c = plan_.cases[std::size_t(configured_case_ < 0 ? 0 : configured_case_)];
  coll::AllreduceArgs a{params_, params_, numel_, coll::Dtype::f32, coll::Op::sum, comm_, &workspace_, plan_.chunk_bytes};
  c.algorithm->run(a);
  const float scale = 1.0f / float(session_.size);
  for (std::size_t i = 0; i < numel_; ++i) params_[i] *= scale;
  if (verify)
    check_mean_against_reference(comm_, std::move(before), params_, scale,
                                 fmt::format("local SGD parameter averaging ({})", c.algorithm->name));
}

StepReport DataParallelEngine::step(int step, bool last_step, const StepFunctions& fn) {
  try {
    return run_step(step, last_step, fn);
  } catch (const CollectiveError&) {
    throw;  // every rank raised it together
  } catch (const std::exception& e) {
    if (session_.size == 1) throw;
    // A local failure mid-step: the peers may be inside an allreduce with this rank and the
    // communication thread may be too, so report it as run_program would and end the job now
    // rather than unwinding into a join that could wait forever.
    std::fprintf(stderr, "%s: error: rank %d: %s\n", session_.program.c_str(), session_.rank, e.what());
    std::fflush(stderr);
    MPI_Abort(session_.comm, 1);
    throw;
  }
}

StepReport DataParallelEngine::run_step(int step, bool last_step, const StepFunctions& fn) {
  StepReport r;
  r.case_id = case_of(step);
  if (r.case_id != configured_case_) {
    const ReductionCase& c = plan_.cases[std::size_t(r.case_id)];
    reducer_.configure(*c.algorithm, c.cap, plan_.chunk_bytes);
    configured_case_ = r.case_id;
  }
  const bool sync = plan_.local_sgd == 0;
  const bool average = !sync && (step % plan_.local_sgd == 0 || last_step);
  const bool verify = (sync || average) && synced_steps_ < plan_.verify_steps;
  const Fault& f = plan_.fault;
  const bool fault_here = f.kind != Fault::Kind::none && f.rank == session_.rank && f.step == step;
  if (fault_here && f.kind == Fault::Kind::corrupt) reducer_.inject_corruption();

  PhaseTimer timer;
  double phase_wall[kAllreduce] = {}, phase_cpu[kAllreduce] = {};
  const double step_start = wall_seconds();
  auto timed = [&](Phase phase, int micro, auto&& body) {
    const double pc0 = process_cpu_seconds();
    timer.start();
    body();
    const PhaseSample s = timer.stop();
    const double pc = process_cpu_seconds() - pc0;
    samples_.add(r.case_id, step, phase, phase == kAllreduce ? micro : -1, s);
    sample_process_cpu_.push_back(pc);
    phase_wall[phase] += s.wall_s;
    phase_cpu[phase] += s.cpu_s;
    r.process_cpu_s += pc;
  };

  const GradReadyFn ready = [this](std::size_t offset) { reducer_.grads_ready(offset); };
  const GradReadyFn ignore = [](std::size_t) {};
  double loss_sum = 0;
  for (int m = 0; m < plan_.accum_steps; ++m) {
    timed(kData, m, [&] { fn.data(m); });
    timed(kForward, m, [&] { loss_sum += fn.forward(); });
    const bool sync_now = sync && m == plan_.accum_steps - 1;
    if (sync_now) reducer_.begin(1.0f / float(session_.size * plan_.accum_steps), plan_.overlap, verify);
    timed(kBackward, m, [&] {
      if (m == 0) std::fill(grads_, grads_ + numel_, 0.0f);
      fn.backward(sync_now ? ready : ignore);
    });
  }
  if (fault_here && f.kind == Fault::Kind::exit) {
    log::error("injected fault: rank {} exits at step {} without a word to its peers", session_.rank, step);
    std::_Exit(3);
  }
  if (fault_here && f.kind == Fault::Kind::error) fail("injected fault: rank {} fails at step {}", session_.rank, step);
  if (sync) {
    // Without synchronisation, accumulation scales by 1/k here instead of in the reducer.
    timed(kWait, 0, [&] { r.exposed_s = reducer_.finish(); });
    if (verify) reducer_.verify();  // outside the timed phases; verified steps are not summarised
  } else if (plan_.accum_steps > 1) {
    const float scale = 1.0f / float(plan_.accum_steps);
    for (std::size_t i = 0; i < numel_; ++i) grads_[i] *= scale;
  }
  timed(kOptimizer, 0, [&] { r.grad_norm = fn.optimizer(); });
  if (average) {
    timed(kAverage, 0, [&] { average_parameters(verify); });
    r.averaged = true;
    r.exposed_s += phase_wall[kAverage];
  }
  if (sync || average) ++synced_steps_;

  // Buckets of this step.
  double comm_cpu = 0;
  if (sync) {
    const auto& bs = reducer_.buckets();
    const auto& ts = reducer_.timings();
    for (std::size_t b = 0; b < bs.size(); ++b) {
      const BucketTiming& t = ts[b];
      samples_.add(r.case_id, step, kAllreduce, std::int64_t(b), PhaseSample{t.start_s, t.end_s - t.start_s, t.cpu_s});
      sample_process_cpu_.push_back(std::numeric_limits<double>::quiet_NaN());
      r.comm_s += t.end_s - t.start_s;
      r.peers_s += t.peers_s;
      r.transfer_s += t.end_s - t.start_s - t.peers_s;
      r.queued_s += t.start_s - t.ready_s;
      comm_cpu += t.cpu_s;
      buckets_.ints("step", "", "optimizer step").push_back(step);
      buckets_.ints("case", "", "reduction case (table cases)").push_back(r.case_id);
      buckets_.ints("bucket", "", "bucket index in the order backward completes them").push_back(std::int64_t(b));
      buckets_.ints("offset", "", "first element in the flat (forward-order) gradient buffer").push_back(std::int64_t(bs[b].offset));
      buckets_.ints("numel", "", "gradient elements in the bucket").push_back(std::int64_t(bs[b].numel));
      buckets_.ints("tensors", "", "parameter tensors in the bucket").push_back(bs[b].num_tensors);
      buckets_.reals("ready_s", "s", "backward finished the bucket's last gradient (rank-local clock, as samples.start_s)").push_back(t.ready_s);
      buckets_.reals("start_s", "s", "the communication thread started its allreduce").push_back(t.start_s);
      buckets_.reals("end_s", "s", "its allreduce (and averaging) finished").push_back(t.end_s);
      buckets_.reals("queued_s", "s", "start_s - ready_s: ready, but the communication thread was still busy").push_back(t.start_s - t.ready_s);
      buckets_.reals("peers_s", "s", "of end_s - start_s: handshake wait until every rank had the bucket ready").push_back(t.peers_s);
      buckets_.reals("transfer_s", "s", "end_s - start_s - peers_s: the allreduce call itself (and the scaling)")
          .push_back(t.end_s - t.start_s - t.peers_s);
      buckets_.reals("cpu_s", "s", "communication thread CPU time spent on it").push_back(t.cpu_s);
    }
  }

  double step_cpu = 0;
  for (int p = 0; p < kAllreduce; ++p)
    if (p != kValidation) {
      r.wall_s += phase_wall[p];
      step_cpu += phase_cpu[p];
    }
  const double compute = phase_wall[kForward] + phase_wall[kBackward] + phase_wall[kOptimizer];
  const int rounds_excluded = int(plan_.cases.size());
  const bool in_summary = step >= first_step_ + rounds_excluded && !verify;
  r.in_summary = in_summary;
  Table& it = iterations_;
  it.ints("step", "", "optimizer step").push_back(step);
  it.ints("case", "", "reduction case (table cases)").push_back(r.case_id);
  it.reals("step_start_s", "s", "start of the step on the rank-local clock (as samples.start_s)").push_back(step_start);
  const char* names[] = {"data_s", "forward_s", "backward_s", "wait_s", "optimizer_s", "average_s"};
  const char* what[] = {"data loading (all micro-batches)", "forward incl. loss (all micro-batches)",
                        "backward (all micro-batches), overlapped by the bucket allreduces",
                        "waiting for outstanding allreduces after backward", "clipping + optimizer update",
                        "local SGD parameter averaging"};
  for (int p = 0; p <= kAverage; ++p) it.reals(names[p], "s", fmt::format("wall time: {}", what[p])).push_back(phase_wall[p]);
  it.reals("step_s", "s", "wall time of the step on this rank (sum of the phases)").push_back(r.wall_s);
  it.reals("step_cpu_s", "s", "main-thread CPU time of the step").push_back(step_cpu);
  it.reals("process_cpu_s", "s", "CPU time of the whole process (all threads) over the step").push_back(r.process_cpu_s);
  it.reals("compute_s", "s", "forward + backward + optimizer wall time").push_back(compute);
  it.reals("comm_s", "s", "sum over buckets of end_s - start_s: peers_s + transfer_s (communication thread busy)").push_back(r.comm_s);
  it.reals("peers_s", "s", "sum over buckets of the handshake wait for peers").push_back(r.peers_s);
  it.reals("transfer_s", "s", "sum over buckets of the allreduce calls themselves").push_back(r.transfer_s);
  it.reals("queued_s", "s", "sum over buckets of the time ready but not yet started").push_back(r.queued_s);
  it.reals("comm_cpu_s", "s", "communication thread CPU time of the step").push_back(comm_cpu);
  it.reals("exposed_comm_s", "s", "communication not hidden behind compute: wait_s + average_s").push_back(r.exposed_s);
  it.ints("synchronised", "", "1 if the gradients were allreduced this step").push_back(sync ? 1 : 0);
  it.ints("averaged", "", "1 if local SGD averaged the parameters after this step").push_back(r.averaged ? 1 : 0);
  it.ints("verified", "", "1 if the step's reduction was checked against MPI_Allreduce").push_back(verify ? 1 : 0);
  it.ints("in_summary", "", "1 if the step counts in the summaries (not the first round of cases, not verified)")
      .push_back(in_summary ? 1 : 0);

  const double local_loss = loss_sum / plan_.accum_steps;
  r.loss = sync ? mean_over_ranks(local_loss) : local_loss;
  return r;
}

void DataParallelEngine::add_validation_sample(int step, const PhaseSample& sample) {
  samples_.add(case_of(step), step, kValidation, -1, sample);
  sample_process_cpu_.push_back(std::numeric_limits<double>::quiet_NaN());
}

void DataParallelEngine::write_trace(TraceWriter& trace) {
  const int nranks = session_.size;
  Table sample_table = samples_.samples_table();
  sample_table.reals("process_cpu_s", "s", "CPU time of the whole process during the phase (NaN for allreduce rows)") =
      sample_process_cpu_;
  trace.write_table("samples", sample_table, TableScope::per_rank, "every timed phase of every step of every rank");
  trace.write_table("phases", samples_.phases_table(), TableScope::shared, "phase ids used in samples");
  trace.write_table("iterations", iterations_, TableScope::per_rank,
                    "per rank and step: phase times, communication (peers, transfer, queued), exposed communication");
  if (plan_.local_sgd == 0)
    trace.write_table("buckets", buckets_, TableScope::per_rank, "per rank, step and bucket: ready, start and end times");

  // Across ranks, over the summarised steps: the iteration time of a step is its slowest rank's.
  const auto& in = ints_of(iterations_, "in_summary");
  const auto& case_col = ints_of(iterations_, "case");
  const auto all_step = gather_series(reals_of(iterations_, "step_s"), comm_);
  const auto all_compute = gather_series(reals_of(iterations_, "compute_s"), comm_);
  const auto all_exposed = gather_series(reals_of(iterations_, "exposed_comm_s"), comm_);
  const auto all_comm = gather_series(reals_of(iterations_, "comm_s"), comm_);
  const auto all_peers = gather_series(reals_of(iterations_, "peers_s"), comm_);
  const auto all_transfer = gather_series(reals_of(iterations_, "transfer_s"), comm_);
  const std::size_t n = in.size();
  const double nan = std::numeric_limits<double>::quiet_NaN();

  Table cases;
  auto& c_id = cases.ints("case", "", "case id (iterations.case)");
  auto& c_alg = cases.strings("algorithm", "gradient allreduce algorithm");
  auto& c_cap = cases.strings("bucket_cap", "bucket cap label: MiB, 'tensor' or 'all'");
  auto& c_cap_bytes = cases.ints("cap_bytes", "B", "cap of buckets after the first");
  auto& c_nb = cases.ints("buckets", "", "number of buckets");
  auto& c_steps = cases.ints("steps", "", "summarised steps of this case");
  auto& c_iter = cases.reals("iteration_mean_s", "s", "mean over steps of the slowest rank's step time");
  auto& c_med = cases.reals("iteration_median_s", "s", "median over steps of the slowest rank's step time");
  auto& c_min = cases.reals("iteration_min_s", "s", "fastest step (slowest rank)");
  auto& c_compute = cases.reals("compute_mean_s", "s", "forward + backward + optimizer, mean over steps and ranks");
  auto& c_comm = cases.reals("comm_mean_s", "s", "communication thread busy time per step (peers + transfer), mean over steps and ranks");
  auto& c_peers = cases.reals("peers_mean_s", "s", "of it, handshake wait for peers per step, mean over steps and ranks");
  auto& c_transfer = cases.reals("transfer_mean_s", "s", "of it, the allreduce calls per step, mean over steps and ranks");
  auto& c_exposed = cases.reals("exposed_comm_mean_s", "s", "exposed communication per step (the wait after backward), mean over steps and ranks");
  auto& c_ref = cases.reals("reference_comm_s", "s",
                            "the same buckets allreduced without overlap in this run after the last step: mean over iterations and ranks");
  auto& c_hidden = cases.reals("hidden_fraction", "",
                               "1 - exposed_comm_mean_s / reference_comm_s (negative: overlapping cost more than it hid)");
  auto& c_imb = cases.reals("compute_imbalance", "", "mean over steps of (max - min) / mean compute time across ranks");
  auto& c_slow = cases.ints("slowest_rank", "", "rank most often slowest in compute");
  auto& c_rate = cases.reals("samples_per_s", "", "global batch rows / iteration_mean_s");
  case_lines_.clear();
  for (std::size_t c = 0; c < plan_.cases.size(); ++c) {
    std::vector<double> iter, compute, comm, peers, transfer, exposed, imb;
    std::vector<int> slowest_count(std::size_t(nranks), 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (!in[i] || case_col[i] != std::int64_t(c)) continue;
      double mx = 0, cmin = 1e300, cmax = -1, csum = 0;
      int slow = 0;
      for (int r = 0; r < nranks; ++r) {
        const std::size_t k = std::size_t(r) * n + i;
        mx = std::max(mx, all_step[k]);
        compute.push_back(all_compute[k]);
        comm.push_back(all_comm[k]);
        exposed.push_back(all_exposed[k]);
        peers.push_back(all_peers[k]);
        transfer.push_back(all_transfer[k]);
        if (all_compute[k] > cmax) cmax = all_compute[k], slow = r;
        cmin = std::min(cmin, all_compute[k]);
        csum += all_compute[k];
      }
      iter.push_back(mx);
      imb.push_back(csum > 0 ? (cmax - cmin) / (csum / nranks) : nan);
      ++slowest_count[std::size_t(slow)];
    }
    auto mean = [&](const std::vector<double>& v) {
      return v.empty() ? nan : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
    };
    const Summary si = summarize(iter);
    const ReductionCase& rc = plan_.cases[c];
    c_id.push_back(std::int64_t(c));
    c_alg.emplace_back(rc.algorithm->name);
    c_cap.push_back(rc.cap.label);
    c_cap_bytes.push_back(std::int64_t(rc.cap.cap_bytes));
    c_nb.push_back(std::int64_t(bucket_slices(layout_, rc.cap).size()));
    c_steps.push_back(std::int64_t(iter.size()));
    c_iter.push_back(iter.empty() ? nan : si.mean);
    c_med.push_back(iter.empty() ? nan : si.median);
    c_min.push_back(iter.empty() ? nan : si.min);
    c_compute.push_back(mean(compute));
    c_comm.push_back(mean(comm));
    c_peers.push_back(mean(peers));
    c_transfer.push_back(mean(transfer));
    c_exposed.push_back(mean(exposed));
    const double ref = c < reference_comm_s_.size() ? reference_comm_s_[c] : nan;
    c_ref.push_back(ref);
    c_hidden.push_back(ref > 0 ? 1.0 - c_exposed.back() / ref : nan);
    c_imb.push_back(mean(imb));
    c_slow.push_back(std::max_element(slowest_count.begin(), slowest_count.end()) - slowest_count.begin());
    c_rate.push_back(iter.empty() ? nan : double(plan_.global_batch) / si.mean);
    case_lines_.push_back(
        iter.empty() ? fmt::format("{} cap {}: no summarised steps", rc.algorithm->name, rc.cap.label)
                     : fmt::format("{} cap {} ({} buckets): {:.1f} ms/iteration over {} steps, compute {:.1f} ms, "
                                   "exposed {:.2f} ms of a {:.2f} ms no-overlap allreduce (hidden {:.0f} %; transfer "
                                   "{:.2f} ms + peers {:.2f} ms while overlapped), imbalance {:.1f} %",
                                   rc.algorithm->name, rc.cap.label, c_nb.back(), si.mean * 1e3, iter.size(),
                                   c_compute.back() * 1e3, c_exposed.back() * 1e3, c_ref.back() * 1e3,
                                   c_hidden.back() * 100, c_transfer.back() * 1e3, c_peers.back() * 1e3,
                                   c_imb.back() * 100));
  }
  trace.write_table("cases", cases, TableScope::shared,
                    "per (algorithm, bucket cap) case: iteration time (slowest rank), compute, communication, exposed and hidden");

  // Per-phase summary over the summarised steps, averaged over ranks (the step row: slowest rank).
  Table summary;
  auto& sm_phase = summary.strings("phase", "phase name, or 'step' for the whole step");
  auto& sm_n = summary.ints("steps", "", "summarised steps");
  auto& sm_mean = summary.reals("wall_mean_s", "s", "mean wall time per step (mean over ranks; step: slowest rank)");
  auto& sm_med = summary.reals("wall_median_s", "s", "median over steps");
  auto& sm_min = summary.reals("wall_min_s", "s", "fastest step");
  auto& sm_cpu = summary.reals("cpu_mean_s", "s", "mean main-thread CPU time per step (mean over ranks)");
  auto& sm_share = summary.reals("share", "", "wall_mean_s / the step's wall_mean_s");
  const char* phase_cols[] = {"data_s", "forward_s", "backward_s", "wait_s", "optimizer_s", "average_s", "step_s"};
  const char* phase_names[] = {"data", "forward", "backward", "wait", "optimizer", "average", "step"};
  const auto& it_col = ints_of(iterations_, "step");
  std::vector<double> step_means;
  for (int p = 0; p < 7; ++p) {
    const auto all = gather_series(reals_of(iterations_, phase_cols[p]), comm_);
    std::vector<double> per_step;
    for (std::size_t i = 0; i < n; ++i) {
      if (!in[i]) continue;
      double acc = 0.0;
      for (int r = 0; r < nranks; ++r) {
        const double v = all[std::size_t(r) * n + i];
        acc = p == 6 ? std::max(acc, v) : acc + v / nranks;
      }
      per_step.push_back(acc);
    }
    // Main-thread CPU per phase from the samples of this rank, averaged over ranks.
    const auto& s_it = ints_of(sample_table, "iteration");
    const auto& s_ph = ints_of(sample_table, "phase");
    const auto& s_cpu = reals_of(sample_table, "cpu_s");
    double cpu_local = 0;
    std::size_t steps_local = 0;
    for (std::size_t i = 0; i < n; ++i) steps_local += in[i] ? 1 : 0;
    for (std::size_t k = 0; k < s_it.size(); ++k) {
      const auto pos = std::lower_bound(it_col.begin(), it_col.end(), s_it[k]) - it_col.begin();
      if (std::size_t(pos) >= n || !in[std::size_t(pos)]) continue;
      if (p < 6 ? s_ph[k] == p : s_ph[k] < kValidation) cpu_local += s_cpu[k];
    }
    const double cpu_mean = steps_local ? mean_over_ranks(cpu_local / double(steps_local)) : nan;
    const Summary sp = summarize(per_step);
    sm_phase.push_back(phase_names[p]);
    sm_n.push_back(std::int64_t(per_step.size()));
    sm_mean.push_back(per_step.empty() ? nan : sp.mean);
    sm_med.push_back(per_step.empty() ? nan : sp.median);
    sm_min.push_back(per_step.empty() ? nan : sp.min);
    sm_cpu.push_back(cpu_mean);
    step_means.push_back(per_step.empty() ? nan : sp.mean);
  }
  for (double m : step_means) sm_share.push_back(m / step_means.back());
  trace.write_table("summary", summary, TableScope::shared,
                    "per-phase statistics over the summarised steps (first round of cases and verified steps excluded)");

  trace.set_attribute("scaling", plan_.scaling);
  trace.set_attribute("micro_batch", std::int64_t(plan_.micro_batch));
  trace.set_attribute("accum_steps", std::int64_t(plan_.accum_steps));
  trace.set_attribute("global_batch", std::int64_t(plan_.global_batch));
  trace.set_attribute("local_sgd", std::int64_t(plan_.local_sgd));
  trace.set_attribute("overlap", std::int64_t(plan_.overlap ? 1 : 0));
  trace.set_attribute("chunk_bytes", std::int64_t(plan_.chunk_bytes));
  trace.set_attribute("verify_steps", std::int64_t(plan_.verify_steps));
  trace.set_attribute("reference_iterations", std::int64_t(plan_.local_sgd > 0 ? 0 : kReferenceIterations));
  trace.set_attribute("num_cases", std::int64_t(plan_.cases.size()));
  trace.set_attribute("gradient_numel", std::int64_t(numel_));
  trace.set_attribute("communication",
                      std::string("one communication thread per rank runs each bucket's allreduce as backward completes it"));
  trace.set_attribute("summary_excludes", fmt::format("the first {} step(s) of the run (one round of cases) and verified steps",
                                                      plan_.cases.size()));
}

}  // namespace sp::dp
