#include "trainers/dp/engine.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <limits>

#include "core/run/binding.hpp"
#include "core/run/hash.hpp"
#include "core/measure/stats.hpp"
#include "core/run/log.hpp"
#include "core/measure/timer.hpp"
#include "trainers/dp/stop_signals.hpp"

namespace sp::dp {

namespace {

double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

}  // namespace

DataParallelEngine::DataParallelEngine(const Session& session, const DataParallelPlan& plan, float* params,
                                       float* grads, const coll::GradientLayout& layout, int first_step,
                                       MPI_Comm stop_comm)
    : session_(session),
      plan_(plan),
      params_(params),
      grads_(grads),
      numel_(layout.total_numel()),
      layout_(layout),
      first_step_(first_step),
      shard_(ParameterShard::whole(layout.total_numel())) {
  if (plan.fault.kind != Fault::Kind::none && plan.fault.rank == session.rank) fault_.emplace(plan.fault);
  SP_MPI_CHECK(MPI_Comm_dup(session.comm, &comm_));
  SP_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  SP_MPI_CHECK(MPI_Comm_dup(stop_comm == MPI_COMM_NULL ? session.comm : stop_comm, &stop_comm_));
  // Only local SGD averages parameters on the main thread; otherwise the reducer's transports are
  // the only ones (a second Gloo mesh would double every rank's sockets and connect time).
  if (plan.local_sgd > 0) transports_ = coll::BackendOption{plan.backend}.make(comm_);
  const bool synchronous = plan.local_sgd == 0 && !plan.no_comm;
  if (synchronous) {
    std::vector<std::string> algorithms;
    for (const ReductionCase& c : plan.cases) algorithms.emplace_back(c.algorithm->name);
    reducer_.emplace(session.comm, grads, layout, plan.backend, algorithms);
    if (plan.sharded()) {
      shard_ = ParameterShard(bucket_slices(layout, plan.cases.at(0).cap), session.size, session.rank, comm_);
      release_gradients_ = plan.shard == "gradients";
      reducer_->shard_buckets(shard_, release_gradients_);
    }
  }

  OverlapRequest request{.mode = plan.overlap,
                         .comm_core = plan.comm_core,
                         .synchronous = synchronous,
                         .transport = plan.backend,
                         .compute_threads = omp_get_max_threads(),
                         .ranks = session.size};
  request.compute_thread_communicates = plan.compute_thread_communicates;
  if (reducer_) {
    request.busy_polls = reducer_->backend_busy_polls();
    for (const ReductionCase& c : plan.cases) request.can_progress &= reducer_->can_progress(*c.algorithm);
  }
  overlap_ = choose_overlap(request, rank_binding(session.comm));
  fail_together(session.comm, overlap_.error, /*usage=*/true);
  if (overlap_.mode == OverlapMode::thread && session.size > 1 && session.thread_level < MPI_THREAD_SERIALIZED)
    fail("--overlap thread needs MPI_THREAD_SERIALIZED, MPI provides level {}", session.thread_level);
  if (reducer_) {
    reducer_->set_overlap(overlap_);
    reducer_->set_streaming(plan.stream_buckets);
  }
  gathers_overlap_ = plan.sharded() && plan.gather_in_next_forward && overlap_.mode != OverlapMode::none;
}

float* DataParallelEngine::segment_gradients() const {
  return reducer_ && !plan_.sharded() ? reducer_->segment_gradients() : nullptr;
}

void DataParallelEngine::use_segment_gradients() {
  if (!segment_gradients()) fail("DataParallelEngine: no gradient buffer in the node segment to use");
  reducer_->gradients_moved_to_segment();
  grads_ = reducer_->segment_gradients();
}

void DataParallelEngine::complete_parameters() {
  if (reducer_ && reducer_->gathering()) reducer_->gather_until(numel_);
}

std::string DataParallelEngine::overlap_line() const {
  return fmt::format("overlap: {}{} ({})", name(overlap_.mode),
                     overlap_.comm_cpu >= 0 ? fmt::format(", communication thread on CPU {}", overlap_.comm_cpu) : "",
                     overlap_.reason);
}

DataParallelEngine::~DataParallelEngine() {
  MPI_Comm_free(&stop_comm_);
  MPI_Comm_free(&comm_);
}

int DataParallelEngine::case_of(int step) const { return int((step - first_step_) % int(plan_.cases.size())); }

void DataParallelEngine::broadcast_parameters() {
  const std::size_t chunk = std::size_t(1) << 28;
  for (std::size_t o = 0; o < numel_; o += chunk)
    SP_MPI_CHECK(MPI_Bcast(params_ + o, int(std::min(chunk, numel_ - o)), MPI_FLOAT, 0, comm_));
}

std::uint64_t parameter_hash(const float* params, std::size_t numel) {
  // The basis lacks the standard one's last digit (14695981039346656037): kept, so hashes printed
  // and stored by earlier runs stay comparable.
  return Fnv1a(1469598103934665603ull).add(params, numel * sizeof(float)).value();
}

std::uint64_t DataParallelEngine::parameter_hash() const { return dp::parameter_hash(params_, numel_); }

void DataParallelEngine::check_in_sync(int step) {
  complete_parameters();
  const std::uint64_t h = parameter_hash();
  std::uint64_t lo = h, hi = h;
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, comm_));
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, comm_));
  if (lo != hi)
    throw CollectiveError(
        fmt::format("parameters differ across ranks after step {} (hashes {:016x} to {:016x})", step, lo, hi));
}

int DataParallelEngine::end_of_step(int step, const StepReport& report) {
  if (plan_.sync_check_after(step) && !plan_.no_comm && (plan_.local_sgd == 0 || report.averaged)) check_in_sync(step);
  int sig = stop_signal_received();
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, stop_comm_));
  return sig;
}

void DataParallelEngine::end_of_run(int last_step, bool interrupted) {
  complete_parameters();  // a run stopped by a signal after a step that left its all-gather in flight
  if (plan_.local_sgd > 0 && interrupted) broadcast_parameters();
  if (!plan_.no_comm) check_in_sync(last_step);  // without communication the models differ by design
  measure_reference_communication();
}

void DataParallelEngine::measure_reference_communication() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  reference_comm_s_.assign(plan_.cases.size(), nan);
  if (!reducer_) return;  // no bucketed allreduce to compare with (local SGD, --no-comm)
  // The gradients are the trainer's; the reference only needs buffers of their size and layout.
  const std::vector<float> saved(grads_, grads_ + numel_);
  for (std::size_t c = 0; c < plan_.cases.size(); ++c) {
    const ReductionCase& rc = plan_.cases[c];
    reducer_->configure(*rc.algorithm, rc.cap, plan_.chunk_bytes);
    configured_case_ = int(c);
    double total = 0;
    for (int i = 0; i <= kReferenceIterations; ++i) {  // iteration 0 warms up
      SP_MPI_CHECK(MPI_Barrier(comm_));
      reducer_->begin(1.0f, /*overlap=*/false, /*verify=*/false);
      const double t = reducer_->finish();
      if (i > 0) total += t;
    }
    reference_comm_s_[c] = mean_over_ranks(total / kReferenceIterations);
  }
  std::copy(saved.begin(), saved.end(), grads_);
}

double DataParallelEngine::mean_over_ranks(double local) const { return mean_across_ranks(local, comm_); }

void DataParallelEngine::average_parameters(bool verify) {
  std::vector<double> before;
  if (verify) before.assign(params_, params_ + numel_);
  const ReductionCase& c = plan_.cases[std::size_t(configured_case_ < 0 ? 0 : configured_case_)];
  coll::AllreduceArgs a{params_,          params_,          numel_,
                        coll::Dtype::f32, coll::Op::sum,    &transports_.for_algorithm(*c.algorithm),
                        &workspace_,      plan_.chunk_bytes};
  c.algorithm->run(a);
  const float scale = 1.0f / float(session_.size);
  for (std::size_t i = 0; i < numel_; ++i) params_[i] *= scale;
  if (verify)
    check_mean_against_reference(comm_, std::move(before), params_, scale,
                                 fmt::format("local SGD parameter averaging ({})", c.algorithm->name));
}

StepReport DataParallelEngine::step(int step, bool last_step, const StepFunctions& fn, bool parameters_read_after) {
  try {
    return run_step(step, last_step, fn, parameters_read_after);
  } catch (const CollectiveError&) {
    throw;  // every rank raised it together
  } catch (const std::exception& e) {
    if (session_.size == 1) throw;
    // A local failure mid-step: the peers may be inside an allreduce with this rank and the
    // communication thread may be too, so report it as run_program would and end the job now
    // rather than unwinding into a join that could wait forever.
    std::fprintf(stderr, "%s: error: rank %d: %s\n", session_.program.c_str(), session_.rank, e.what());
    abort_job(session_.comm, 1);
  }
}

StepReport DataParallelEngine::run_step(int step, bool last_step, const StepFunctions& fn, bool parameters_read_after) {
  StepReport r;
  r.case_id = case_of(step);
  if (reducer_ && r.case_id != configured_case_) {
    complete_parameters();
    const ReductionCase& c = plan_.cases[std::size_t(r.case_id)];
    reducer_->configure(*c.algorithm, c.cap, plan_.chunk_bytes);
    configured_case_ = r.case_id;
  }
  const bool sync = reducer_.has_value();
  const bool average = plan_.local_sgd > 0 && (step % plan_.local_sgd == 0 || last_step);
  const bool verify = (sync || average) && synced_steps_ < plan_.verify_steps;
  if (fault_ && reducer_) fault_->before_step(step, *reducer_);

  IterationRow row;
  row.step = step;
  row.case_id = r.case_id;
  row.start_s = wall_seconds();
  double step_cpu = 0;
  // A phase's sample (wall and main-thread CPU) and the process's CPU time over it.
  struct Measured {
    PhaseSample sample;
    double process_cpu_s;
  };
  auto measure = [&](auto&& body) {
    const double pc0 = process_cpu_seconds();
    PhaseTimer timer;
    timer.start();
    body();
    const PhaseSample s = timer.stop();
    return Measured{s, process_cpu_seconds() - pc0};
  };
  auto record = [&](Phase phase, const Measured& m) {
    log_.add_phase(r.case_id, step, phase, m.sample, m.process_cpu_s);
    row.phase_s[step_phase_slot(phase)] += m.sample.wall_s;
    step_cpu += m.sample.cpu_s;
    r.process_cpu_s += m.process_cpu_s;
  };
  auto timed = [&](Phase phase, auto&& body) { record(phase, measure(body)); };

  // Backward's time; in progress mode the calls that advanced buckets from inside it are
  // communication, recorded apart.
  auto record_backward = [&](Measured backward, bool synchronised) {
    if (synchronised && overlap_.mode == OverlapMode::progress) {
      const Measured progress{{backward.sample.start_s, reducer_->progress_s(), reducer_->progress_cpu_s()},
                              reducer_->progress_cpu_s()};
      backward.sample.wall_s -= progress.sample.wall_s;
      backward.sample.cpu_s -= progress.sample.cpu_s;
      backward.process_cpu_s -= progress.process_cpu_s;
      record(Phase::backward, backward);
      record(Phase::progress, progress);
      r.progress_s = progress.sample.wall_s;
      return;
    }
    record(Phase::backward, backward);
  };
  const GradReadyFn ready = [this, step](std::size_t offset) {
    reducer_->grads_ready(offset);
    if (fault_) fault_->in_backward(step);
  };
  const GradReadyFn ignore = [](std::size_t) {};
  double loss_sum = 0;
  // --shard: the previous update's all-gathers, completed as forward needs the parameters; the
  // time inside the hook is communication, not forward's.
  double gather_s = 0, gather_cpu_s = 0;
  const bool gathering = reducer_ && reducer_->gathering();
  const ParamsNeededFn need = [&](std::size_t end) {
    if (!reducer_ || !reducer_->gathering()) return;
    const double c0 = thread_cpu_seconds(), t0 = wall_seconds();
    reducer_->gather_until(end);
    gather_s += wall_seconds() - t0;
    gather_cpu_s += thread_cpu_seconds() - c0;
  };
  if (fn.schedule) {  // a pipeline stage: its whole step at once
    timed(Phase::data, [&] { fn.data(0); });
    if (sync) reducer_->begin(1.0f / float(session_.size), overlap_.mode != OverlapMode::none, verify);
    ScheduledStep scheduled;
    Measured whole = measure([&] {
      std::fill(grads_, grads_ + numel_, 0.0f);
      scheduled = fn.schedule(sync ? ready : ignore);
    });
    const Measured forward{{whole.sample.start_s, scheduled.forward_s, scheduled.forward_cpu_s},
                           scheduled.forward_cpu_s};
    whole.sample.wall_s -= scheduled.forward_s;
    whole.sample.cpu_s -= scheduled.forward_cpu_s;
    whole.process_cpu_s -= scheduled.forward_cpu_s;
    record(Phase::forward, forward);
    record_backward(whole, sync);  // the stage's last backward hands its blocks over as they are final
    loss_sum = scheduled.loss;
  }
  for (int m = 0; m < plan_.accum_steps && !fn.schedule; ++m) {
    timed(Phase::data, [&] { fn.data(m); });
    Measured forward = measure([&] {
      loss_sum += fn.forward(m, need);
      need(numel_);  // a forward that did not ask for every parameter: none stays in flight
    });
    if (gathering && m == 0) {
      const Measured gather{{forward.sample.start_s, gather_s, gather_cpu_s}, gather_cpu_s};
      forward.sample.wall_s -= gather_s;
      forward.sample.cpu_s -= gather_cpu_s;
      forward.process_cpu_s -= gather_cpu_s;
      record(Phase::forward, forward);
      record(Phase::all_gather, gather);
      r.exposed_s += gather_s;
      r.exposed_after_ready_s += gather_s;
    } else {
      record(Phase::forward, forward);
    }
    const bool sync_now = sync && m == plan_.accum_steps - 1;
    if (sync_now)
      reducer_->begin(1.0f / float(session_.size * plan_.accum_steps), overlap_.mode != OverlapMode::none, verify);
    Measured backward = measure([&] {
      // --shard gradients: the buffer is zero already (released after the last update).
      if (m == 0 && !release_gradients_) std::fill(grads_, grads_ + numel_, 0.0f);
      fn.backward(sync_now ? ready : ignore);
    });
    record_backward(backward, sync_now);
  }
  if (fault_) fault_->after_backward(step, session_.rank);
  if (sync) {
    // Without synchronisation, accumulation scales by 1/k here instead of in the reducer.
    // Added to, not set: forward may already have counted the all-gathers it completed (--shard).
    timed(Phase::wait, [&] { r.exposed_s += reducer_->finish(); });
    // What the step's gradients hold of memory once reduced (under --shard gradients this rank's
    // blocks and the pages they share with the released rest).
    if (shard_.sharded()) gradient_resident_max_ = std::max(gradient_resident_max_, resident_bytes(grads_, numel_));
    r.exposed_peers_s = reducer_->exposed().peers_s;
    r.exposed_after_ready_s += reducer_->exposed().after_ready_s;
    if (verify) reducer_->verify();  // outside the timed phases; verified steps are not summarised
  } else if (plan_.accum_steps > 1) {
    const float scale = 1.0f / float(plan_.accum_steps);
    for (std::size_t i = 0; i < numel_; ++i) grads_[i] *= scale;
  }
  timed(Phase::optimizer, [&] {
    r.grad_norm = fn.optimizer();
    if (release_gradients_) release_to_zeros(grads_, numel_);  // consumed: back to the system, zero
  });
  if (shard_.sharded()) {
    const bool in_next_forward = gathers_overlap_ && !last_step && !parameters_read_after &&
                                 !plan_.sync_check_after(step) && reducer_->can_overlap_gathers();
    const double before = row.phase_s[step_phase_slot(Phase::all_gather)];
    timed(Phase::all_gather, [&] {
      if (in_next_forward) {
        reducer_->start_gathers(params_);  // completed by the next step's forward
        ++gathers_left_to_forward_;
      } else {
        reducer_->gather_parameters(params_);
      }
    });
    const double gathering_s = row.phase_s[step_phase_slot(Phase::all_gather)] - before;
    r.exposed_s += gathering_s;
    r.exposed_after_ready_s += gathering_s;
  }
  if (average) {
    timed(Phase::average, [&] { average_parameters(verify); });
    r.averaged = true;
    const double averaging = row.phase_s[step_phase_slot(Phase::average)];
    r.exposed_s += averaging;
    r.exposed_after_ready_s += averaging;
  }
  if (sync || average) ++synced_steps_;

  if (sync) {
    const auto& buckets = reducer_->buckets();
    const auto& timings = reducer_->timings();
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      const BucketTiming& t = timings[b];
      log_.add_bucket(r.case_id, step, b, buckets[b], t, shard_.sharded() ? Phase::reduce_scatter : Phase::allreduce);
      r.comm_s += t.end_s - t.start_s;
      r.peers_s += t.peers_s;
      r.transfer_s += t.end_s - t.start_s - t.peers_s;
      r.queued_s += t.queued_s();
      row.comm_cpu_s += t.cpu_s;
    }
  }

  for (double w : row.phase_s) r.wall_s += w;
  const auto wall_of = [&](Phase p) { return row.phase_s[step_phase_slot(p)]; };
  r.in_summary = step >= first_step_ + int(plan_.cases.size()) && !verify;  // not the first round of cases
  row.step_s = r.wall_s;
  row.step_cpu_s = step_cpu;
  row.process_cpu_s = r.process_cpu_s;
  row.compute_s = wall_of(Phase::forward) + wall_of(Phase::backward) + wall_of(Phase::optimizer);
  row.comm_s = r.comm_s;
  row.peers_s = r.peers_s;
  row.transfer_s = r.transfer_s;
  row.queued_s = r.queued_s;
  row.exposed_s = r.exposed_s;
  row.exposed_peers_s = r.exposed_peers_s;
  row.exposed_after_ready_s = r.exposed_after_ready_s;
  row.synchronised = sync;
  row.averaged = r.averaged;
  row.verified = verify;
  row.in_summary = r.in_summary;
  log_.add_iteration(row);

  const double local_loss = loss_sum / plan_.accum_steps;
  r.loss = sync ? mean_over_ranks(local_loss) : local_loss;
  return r;
}

void DataParallelEngine::add_validation_sample(int step, const PhaseSample& sample) {
  log_.add_phase(case_of(step), step, Phase::validation, sample, std::numeric_limits<double>::quiet_NaN());
}

}  // namespace sp::dp
