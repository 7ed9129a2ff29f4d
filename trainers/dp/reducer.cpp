#include "trainers/dp/reducer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/run/binding.hpp"
#include "core/run/error.hpp"
#include "core/run/log.hpp"
#include "core/run/program.hpp"
#include "core/measure/timer.hpp"

namespace sp::dp {

std::vector<BucketSlice> bucket_slices(const coll::GradientLayout& layout, const coll::BucketCap& cap) {
  std::vector<std::size_t> offset(layout.tensors.size());
  std::size_t o = 0;
  for (std::size_t i = 0; i < layout.tensors.size(); ++i) {
    offset[i] = o;
    o += layout.tensors[i].numel;
  }
  std::vector<BucketSlice> out;
  for (const coll::Bucket& b : coll::pack_buckets(layout, sizeof(float), cap)) {
    BucketSlice s;
    s.offset = std::numeric_limits<std::size_t>::max();
    std::size_t end = 0;
    for (int t : b.tensors) {
      s.offset = std::min(s.offset, offset[t]);
      end = std::max(end, offset[t] + layout.tensors[t].numel);
    }
    if (b.tensors.empty()) s.offset = end = 0;
    s.numel = b.numel;
    s.num_tensors = int(b.tensors.size());
    // pack_buckets takes consecutive tensors, so a bucket is one slice; anything else is a bug.
    if (end - s.offset != s.numel) fail("bucket_slices: bucket of {} tensors is not contiguous", b.tensors.size());
    out.push_back(s);
  }
  return out;
}

GradientReducer::GradientReducer(MPI_Comm comm, float* grads, const coll::GradientLayout& layout,
                                 const std::string& backend, const std::vector<std::string>& algorithms)
    : grads_(grads), layout_(layout) {
  SP_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  SP_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  SP_MPI_CHECK(MPI_Comm_size(comm_, &nranks_));
  SP_MPI_CHECK(MPI_Comm_dup(comm, &ready_comm_));
  SP_MPI_CHECK(MPI_Comm_set_errhandler(ready_comm_, MPI_ERRORS_RETURN));
  transports_ = coll::BackendOption{backend}.make(comm_);
  std::vector<std::string> node_local;
  for (const std::string& a : algorithms)
    if (coll::find_algorithm(a).node_local && std::find(node_local.begin(), node_local.end(), a) == node_local.end())
      node_local.push_back(a);
  if (node_local.empty()) return;
  // Channel 0 for blocking runs, one per bucket in flight in progress mode. Every algorithm counts
  // as named: on several nodes one confined to a node is refused, never dropped.
  const std::string names = fmt::format("{}", fmt::join(node_local, ","));
  const std::size_t bytes = layout_.total_numel() * sizeof(float);
  coll::attach_node_segment(transports_, workspace_, comm_, node_local, names, bytes + 64, kInFlight + 1);
  for (int k = 0; k < kInFlight; ++k)
    slot_workspace_[std::size_t(k)].attach(transports_.node.get(), workspace_.rail(), k + 1);
  for (const std::string& a : node_local)
    if (coll::find_algorithm(a).buffers_in_segment && !arena_grads_.data())
      arena_grads_ = transports_.node->allocate(std::max<std::size_t>(bytes, 1));
}

void GradientReducer::set_overlap(const OverlapChoice& overlap) {
  if (thread_.joinable() || in_step_) fail("GradientReducer::set_overlap after the first step");
  overlap_choice_ = overlap;
  if (overlap.mode != OverlapMode::thread) return;
  // The compute thread keeps the rest of the binding; the communication thread its own core.
  if (overlap.comm_cpu >= 0) bind_this_thread(overlap.compute_cpus);
  thread_ = std::thread([this] {
    if (overlap_choice_.comm_cpu >= 0) {
      try {
        bind_this_thread({overlap_choice_.comm_cpu});
      } catch (...) {
        std::lock_guard lock(mutex_);
        error_ = std::current_exception();
      }
    }
    communication_loop();
  });
}

GradientReducer::~GradientReducer() {
  {
    std::unique_lock lock(mutex_);
    // Unwinding from a local error while an allreduce is in flight: the peers may never complete
    // it, so joining could hang forever. Take the whole job down now, as run_program would.
    if (busy_ && std::uncaught_exceptions() > 0) {
      lock.unlock();
      log::error("a local error interrupted an in-flight gradient allreduce; aborting the job");
      abort_job(MPI_COMM_WORLD, 1);
    }
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  MPI_Comm_free(&ready_comm_);
  MPI_Comm_free(&comm_);
}

void GradientReducer::gradients_moved_to_segment() {
  if (!segment_gradients()) fail("GradientReducer: no gradient buffer in the node segment to move to");
  if (algorithm_) fail("GradientReducer: gradients moved to the node segment after the first configure");
  grads_ = segment_gradients();
}

void GradientReducer::configure(const coll::Algorithm& algorithm, const coll::BucketCap& cap, std::size_t chunk_bytes) {
  std::lock_guard lock(mutex_);
  if (in_step_ || gathering()) fail("GradientReducer::configure inside a step");
  algorithm_ = &algorithm;
  if (algorithm.node_local && !transports_.node)
    fail("GradientReducer: algorithm '{}' was not among the reducer's algorithms (no node segment)", algorithm.name);
  through_arena_ = algorithm.buffers_in_segment;
  chunk_bytes_ = chunk_bytes;
  buckets_ = bucket_slices(layout_, cap);
  // Every bucket's program, built once per case. Buckets in flight at once have their own tags.
  programs_.clear();
  gather_programs_.clear();
  transport_ = nullptr;
  if (shard_) {
    configure_sharded(algorithm);
    return;
  }
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    float* p = bucket_buffer(i);
    const coll::AllreduceArgs call{p,
                                   p,
                                   buckets_[i].numel,
                                   coll::Dtype::f32,
                                   coll::Op::sum,
                                   &transports_.for_algorithm(algorithm),
                                   &workspace_,
                                   chunk_bytes};
    auto [transport, shape] = algorithm.placement(call, coll::tag::kTagStride * int(i % kInFlight));
    shape.scaled = true;  // the mean: scaled where the schedule makes final values, if it can
    transport_ = transport;
    programs_.push_back(algorithm.plan(shape));
  }
  if (!transport_) transport_ = &transports_.for_algorithm(algorithm);  // (no buckets)
  if (overlap_choice_.mode == OverlapMode::progress && !transport_->can_progress())
    fail("the {} transport cannot run {} in progress mode", transport_->name(), algorithm.name);
}

void GradientReducer::begin(float scale, bool overlap, bool verify) {
  if (!algorithm_) fail("GradientReducer::begin before configure");
  if (gathering()) fail("GradientReducer::begin while the parameters' all-gathers are in flight");
  std::lock_guard lock(mutex_);
  timings_.assign(buckets_.size(), BucketTiming{});
  num_ready_ = num_done_ = 0;
  started_ = finished_ = 0;
  progress_s_ = progress_cpu_s_ = 0;
  exposed_ = {};
  scale_ = scale;
  overlap_ = overlap && overlap_choice_.mode != OverlapMode::none;
  verify_ = verify;
  if (verify) snapshot_.assign(layout_.total_numel(), 0.0);
  produced_ = 0;
  final_from_.store(layout_.total_numel(), std::memory_order_relaxed);
  streams_ = overlap_ && may_stream() && through_arena_ && !programs_.empty() && programs_.front().waits_input;
  in_step_ = true;
}

bool GradientReducer::may_stream() const {
  return streaming_allowed_ && overlap_choice_.mode != OverlapMode::none && gradients_in_segment() && !shard_;
}

void GradientReducer::gradients_final_from(std::size_t offset) {
  const std::size_t before = final_from_.load(std::memory_order_relaxed);  // this thread's own store
  if (offset >= before) return;
  // The verification's copy of the inputs, taken as they become final: a streamed bucket reduces
  // its first chunks in place before its last ones are written.
  if (verify_) std::copy(grads_ + offset, grads_ + before, snapshot_.begin() + std::ptrdiff_t(offset));
  final_from_.store(offset, std::memory_order_release);
  final_from_.notify_all();  // a communication thread inside a streamed bucket's program waits on it
  if (offset == 0 && transports_.node) transports_.node->mark(++steps_all_final_);
}

bool GradientReducer::can_start(std::size_t i) const {
  if (i < produced_) return true;
  // A streamed bucket once its last chunk may be final: its program waits for each chunk's input.
  return streamed(i) && final_from_.load(std::memory_order_relaxed) < buckets_[i].offset + buckets_[i].numel;
}

void GradientReducer::grads_ready(std::size_t offset) {
  if (!in_step_) return;  // a backward that does not synchronise (accumulation, local SGD)
  gradients_final_from(offset);
  std::size_t k = produced_;
  while (k < buckets_.size() && buckets_[k].offset >= offset) ++k;
  if (k > produced_) {
    const double now = wall_seconds();
    for (std::size_t j = produced_; j < k; ++j) timings_[j].ready_s = now;
    produced_ = k;
  }
  if (!overlap_) return;
  if (overlap_choice_.mode == OverlapMode::progress) {
    if (finished_ == buckets_.size() || !can_start(finished_)) return;  // nothing to start or advance
    const double c0 = thread_cpu_seconds(), t0 = wall_seconds();
    advance_in_flight();
    progress_s_ += wall_seconds() - t0;
    progress_cpu_s_ += thread_cpu_seconds() - c0;
    return;
  }
  // Thread mode: a streamed bucket may go to the thread once its last gradients are final.
  if (streams_ && k < buckets_.size() && can_start(k)) ++k;
  if (k == num_ready_) return;
  {
    std::lock_guard lock(mutex_);
    num_ready_ = k;
  }
  cv_.notify_all();
}

float* GradientReducer::bucket_buffer(std::size_t i) const {
  return (through_arena_ ? reinterpret_cast<float*>(arena_grads_.data()) : grads_) + buckets_[i].offset;
}

void GradientReducer::start_bucket(std::size_t i) {
  timings_[i].start_s = wall_seconds();
  const BucketSlice& b = buckets_[i];
  if (copies_through_arena()) std::copy(grads_ + b.offset, grads_ + b.offset + b.numel, bucket_buffer(i));
}

void GradientReducer::end_bucket(std::size_t i) {
  const BucketSlice& b = buckets_[i];
  float* p = grads_ + b.offset;
  if (copies_through_arena()) std::copy(bucket_buffer(i), bucket_buffer(i) + b.numel, p);
  // The reduced elements this rank keeps: the bucket, or under --shard its block of it.
  float* kept = shard_ ? grads_ + own_offset(i) : p;
  const std::size_t kept_numel = shard_ ? own_size(i) : b.numel;
  if (scale_ != 1.0f && !programs_[i].scales) coll::scale_local(kept, kept_numel, coll::Dtype::f32, scale_);
  if (release_gradients_) {  // the other ranks' blocks of this bucket are dead here
    release_pages(p, own_offset(i) - b.offset);
    release_pages(kept + kept_numel, b.offset + b.numel - own_offset(i) - kept_numel);
  }
  if (corrupt_next_ && kept_numel > 0) {
    kept[0] += 1.0f;
    corrupt_next_ = false;
  }
  timings_[i].end_s = wall_seconds();
}

coll::Bindings GradientReducer::bind_bucket(std::size_t i, coll::Workspace& ws) {
  float* p = bucket_buffer(i);
  coll::Bindings bound = ws.bind(programs_[i], p, shard_ ? grads_ + own_offset(i) : p, *transport_);
  bound.scale = scale_;
  if (streamed(i)) {
    bound.input_final_from = &final_from_;
    bound.input_offset = buckets_[i].offset;
    bound.input_written_elsewhere = overlap_choice_.mode == OverlapMode::thread;
  }
  return bound;
}

void GradientReducer::run_bucket_blocking(std::size_t i) {
  coll::run_blocking(programs_[i], bind_bucket(i, workspace_), *transport_);
}

// Advances the buckets in flight in order, then starts the ready ones a free slot allows (bucket
// i takes slot i % kInFlight once bucket i - kInFlight is done), advancing each once.
void GradientReducer::advance_in_flight() {
  auto advance = [&](std::size_t i) {
    const double t0 = wall_seconds();
    const bool done = runs_[i % kInFlight].advance();
    timings_[i].cpu_s += wall_seconds() - t0;
    if (done) end_bucket(i);
    return done;
  };
  for (std::size_t i = finished_; i < started_; ++i)
    if (!runs_[i % kInFlight].done()) advance(i);
  auto settle = [&] {
    while (finished_ < started_ && runs_[finished_ % kInFlight].done()) ++finished_;
  };
  settle();
  while (started_ < buckets_.size() && started_ < finished_ + kInFlight && can_start(started_)) {
    const std::size_t i = started_++;
    start_bucket(i);
    runs_[i % kInFlight].start(programs_[i], bind_bucket(i, slot_workspace_[i % kInFlight]), *transport_);
    advance(i);
    settle();
  }
}

double GradientReducer::finish() {
  if (!in_step_) fail("GradientReducer::finish without begin");
  const double t0 = wall_seconds();
  for (std::size_t j = produced_; j < buckets_.size(); ++j) timings_[j].ready_s = t0;
  produced_ = buckets_.size();
  gradients_final_from(0);
  double waited = 0;
  try {
    waited = !overlap_                                       ? finish_blocking(t0)
             : overlap_choice_.mode == OverlapMode::progress ? finish_progress(t0)
                                                             : finish_thread(t0);
  } catch (...) {
    std::lock_guard lock(mutex_);
    in_step_ = false;
    throw;
  }
  std::lock_guard lock(mutex_);
  in_step_ = false;
  return waited;
}

// A barrier (every rank has finished backward), then every bucket in order.
double GradientReducer::finish_blocking(double t0) {
  if (nranks_ > 1) SP_MPI_CHECK(MPI_Barrier(ready_comm_));
  const double all_ready = wall_seconds();
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    start_bucket(i);
    run_bucket_blocking(i);
    end_bucket(i);
  }
  const double t_end = wall_seconds();
  exposed_ = {t_end - t0, all_ready - t0, t_end - all_ready};
  return exposed_.total_s;
}

// Advances every bucket to its end. A nonblocking barrier entered now completes, on this rank's
// clock, when the slowest rank has finished backward too.
double GradientReducer::finish_progress(double t0) {
  MPI_Request barrier = MPI_REQUEST_NULL;
  double all_ready = t0;
  bool barrier_done = nranks_ == 1;
  if (!barrier_done) SP_MPI_CHECK(MPI_Ibarrier(ready_comm_, &barrier));
  for (;;) {
    advance_in_flight();
    if (!barrier_done) {
      int flag = 0;
      SP_MPI_CHECK(MPI_Test(&barrier, &flag, MPI_STATUS_IGNORE));
      if (flag) barrier_done = true, all_ready = wall_seconds();
    }
    if (barrier_done && finished_ == buckets_.size()) break;
  }
  const double t_end = wall_seconds();
  const double peers = std::min(all_ready, t_end) - t0;
  exposed_ = {t_end - t0, peers, t_end - t0 - peers};
  return exposed_.total_s;
}

double GradientReducer::finish_thread(double t0) {
  // Over a transport whose waits sleep (Gloo) the thread may share this rank's core, where a bucket
  // in flight moves only when the core is free: it finishes after the slowest peer's backward, so
  // the handshakes, passed long before, do not tell that wait apart. A nonblocking barrier entered
  // now does, tested here between the thread's own MPI calls (its handshakes: MPI_THREAD_SERIALIZED).
  const bool ended_barrier = nranks_ > 1 && !streams_ && !transport_->busy_polls();
  MPI_Request ended = MPI_REQUEST_NULL;
  if (ended_barrier) {
    std::lock_guard mpi(mpi_calls_);
    SP_MPI_CHECK(MPI_Ibarrier(ready_comm_, &ended));
  }
  std::unique_lock lock(mutex_);
  num_ready_ = buckets_.size();
  cv_.notify_all();
  auto done = [&] { return num_done_ == buckets_.size() || error_; };
  // A streamed bucket passes its handshake before its gradients are all final, so the handshakes
  // no longer tell when the slowest rank had them ready: the ranks' marks in the node segment do
  // (set as each rank's last gradients become final), polled every 50 us while the thread works.
  double all_ready = t0;
  if (streams_) {
    while (!done() && !transports_.node->all_marked(steps_all_final_))
      cv_.wait_for(lock, std::chrono::microseconds(50));
    all_ready = wall_seconds();
  } else if (ended_barrier) {
    for (int flag = 0; !flag && !error_;) {
      {
        std::lock_guard mpi(mpi_calls_);
        SP_MPI_CHECK(MPI_Test(&ended, &flag, MPI_STATUS_IGNORE));
      }
      all_ready = wall_seconds();
      if (!flag) cv_.wait_for(lock, std::chrono::microseconds(50));
    }
  }
  cv_.wait(lock, done);
  if (error_) std::rethrow_exception(error_);
  const double t_end = wall_seconds();
  const double peers = streams_ || ended_barrier ? std::min(all_ready, t_end) - t0 : handshake_waits_after(t0, t_end);
  exposed_ = {t_end - t0, peers, t_end - t0 - peers};
  return exposed_.total_s;
}

// The thread waited for peers in its handshakes; the part of those waits in [t0, t_end] is the
// wait for the slowest backward (the handshakes are one after the other, so the parts add up).
double GradientReducer::handshake_waits_after(double t0, double t_end) const {
  double peers = 0;
  for (const BucketTiming& t : timings_)
    peers += std::max(0.0, std::min(t.start_s + t.peers_s, t_end) - std::max(t.start_s, t0));
  return std::min(peers, t_end - t0);
}

void GradientReducer::communication_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || (in_step_ && !error_ && num_done_ < num_ready_); });
    if (stop_) return;
    const std::size_t i = num_done_;
    busy_ = true;
    lock.unlock();
    try {
      BucketTiming& t = timings_[i];
      const double cpu0 = thread_cpu_seconds();
      t.start_s = wall_seconds();
      if (nranks_ > 1) {
        MPI_Request handshake;
        {
          std::lock_guard mpi(mpi_calls_);
          SP_MPI_CHECK(MPI_Ibarrier(comm_, &handshake));
        }
        for (int done = 0;;) {
          {
            std::lock_guard mpi(mpi_calls_);
            SP_MPI_CHECK(MPI_Test(&handshake, &done, MPI_STATUS_IGNORE));
          }
          if (done) break;
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        t.peers_s = wall_seconds() - t.start_s;
      }
      const double started = t.start_s;
      start_bucket(i);  // the snapshot; the start stays the handshake's
      t.start_s = started;
      run_bucket_blocking(i);
      end_bucket(i);
      t.cpu_s = thread_cpu_seconds() - cpu0;
      lock.lock();
      ++num_done_;
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
    }
    busy_ = false;
    cv_.notify_all();
  }
}

void GradientReducer::verify() {
  if (!verify_ || in_step_) fail("GradientReducer::verify needs a finished step begun with verify");
  verify_ = false;
  std::vector<double> inputs;
  inputs.swap(snapshot_);
  check_mean_against_reference(
      comm_, std::move(inputs), grads_, scale_,
      fmt::format("gradient {} ({})", shard_ ? "reduce-scatter" : "allreduce", algorithm_->name),
      shard_ ? &shard_->ranges() : nullptr);
}

}  // namespace sp::dp
