// The gradient reducer of the data-parallel engine: DDP-style bucketed allreduce of a model's
// flat gradient buffer, overlapped with backward.
//
// Buckets. The buffer holds the parameter tensors in forward (registration) order and backward
// finishes them from the end of the buffer towards offset 0. Buckets are packed as DDP does
// (collectives/buckets.hpp: reverse order, first bucket 1 MiB, later ones at the cap), so every
// bucket is one contiguous slice of the forward-ordered buffer and backward completes the buckets
// in index order. Backward reports a watermark, grads_ready(offset): every gradient at offset >=
// offset is final. Every rank allreduces the buckets in index order (which keeps the ranks'
// collectives matched) and scales them by 1/(ranks x micro-batches), so the result is the mean.
// finish() waits for the rest: the time it blocks is the exposed communication.
//
// Overlap modes (overlap.hpp):
//  - progress: no thread. A ready bucket's program (collectives/algorithms/program.hpp) is started at once
//    and every grads_ready() call advances the buckets in flight as far as they go without
//    blocking (at most kInFlight at a time, each with its own tags and scratch). The time inside
//    those calls is communication, never compute: progress_s() reports it so the engine can move
//    it out of backward. MPI then needs only MPI_THREAD_FUNNELED.
//    Streamed buckets: with the gradients in the node segment, a program that waits for its input
//    chunk by chunk (shm-seg's, collectives/algorithms/shm.cpp) starts as soon as its bucket's
//    last gradients are final and reduces each chunk once every rank has finished it, so only the
//    chunks backward finishes last are left for finish(). Such a bucket starts before it is ready
//    (BucketTiming::start_s < ready_s). Thread mode streams too: the thread takes such a bucket
//    once its last gradients are final and waits inside the program for each chunk.
//  - thread: a communication thread takes the ready buckets one after the other. MPI libraries
//    busy-poll while a blocking call waits, so each bucket starts with a handshake, an
//    MPI_Ibarrier polled every 50 us with sleeps between, and the blocking program then runs with
//    every rank ready; the wait is BucketTiming::peers_s. The thread is bound to a spare core
//    where overlap.hpp found one. MPI must provide MPI_THREAD_SERIALIZED: one thread calls MPI at
//    a time (the thread during a synchronising backward, the main thread otherwise).
//  - none: every bucket after backward, blocking, on the main thread.
//
// Exposed time split (every mode): finish() starts when this rank's backward ends; the time until
// every rank had ended its backward is waiting for the slowest peer (imbalance), the rest is
// communication. How "every rank ended" is known without comparing clocks across nodes: a
// nonblocking barrier entered when backward ends and tested while finish() waits (progress), a
// barrier before the buckets (none), or in thread mode: over MPI (the thread on a spare core, so its
// buckets never wait on a peer's backward) the handshakes the thread waits in after backward ended
// (the time they overlap the wait); over Gloo, where the thread may share the rank's core and a
// bucket in flight then waits for the slowest peer's backward, the nonblocking barrier too; when
// the buckets stream, whose handshakes pass before their gradients are final, a mark per rank in
// the node segment set when its last are.
#pragma once
#include <mpi.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/algorithms/backend.hpp"
#include "collectives/buckets.hpp"
#include "trainers/dp/bucket_slice.hpp"
#include "trainers/dp/overlap.hpp"
#include "trainers/dp/shard.hpp"

namespace sp::dp {

// Checks result[i] == scale x (sum over ranks of inputs[i]) for every element, against
// MPI_Allreduce in double precision, within the float rounding bound of a p-term sum. Collective
// over comm; throws CollectiveError (the same on every rank) naming the first wrong element.
// what: names the operation in the message, e.g. "gradient allreduce (ring)".
// only: the elements checked (this rank's shard after a reduce-scatter); nullptr: all.
void check_mean_against_reference(MPI_Comm comm, std::vector<double> inputs, const float* result, double scale,
                                  const std::string& what, const std::vector<ShardRange>* only = nullptr);

// The packing of pack_buckets() expressed as slices of the forward-ordered buffer, in the order
// backward completes them (decreasing offset).
std::vector<BucketSlice> bucket_slices(const coll::GradientLayout& layout, const coll::BucketCap& cap);

// Times of one bucket in one step, on this rank's clock (wall_seconds()).
struct BucketTiming {
  double ready_s = 0;  // backward produced its last gradient
  double start_s = 0;  // its allreduce started (thread: the handshake, then the allreduce; streamed: before ready)
  double peers_s = 0;  // thread: of end - start, waiting in the handshake until every rank had it ready
  double end_s = 0;    // allreduce and scaling done
  double cpu_s = 0;    // CPU time spent on it (thread: the thread's; progress: the calls that advanced it)
  // Ready but not started; 0 for a streamed bucket, which starts before it is ready.
  double queued_s() const { return start_s > ready_s ? start_s - ready_s : 0.0; }
};

// The wait after backward of the last finish(), split (see the header).
struct ExposedSplit {
  double total_s = 0;
  double peers_s = 0;        // until every rank had finished backward
  double after_ready_s = 0;  // the rest
};

class GradientReducer {
 public:
  // Buckets of a progress-mode step in flight at once; each has its own tags and scratch.
  static constexpr int kInFlight = 2;

  // comm is duplicated so the engine's messages never match anyone else's. grads: the flat
  // buffer (forward order, layout.total_numel() floats), which must outlive the reducer.
  // backend: the transport the buckets travel on (collectives/algorithms/backend.hpp), connected here.
  // algorithms: every algorithm the run will configure; with node-local ones the node's segment
  // is made here (collective; one line on every rank if these ranks cannot run them), with a
  // channel per bucket in flight, and for those whose buffers lie in the segment a copy of the
  // gradient buffer in its arena: each bucket is copied in when it starts and out when it ends,
  // unless the gradients moved there (gradients_moved_to_segment).
  GradientReducer(MPI_Comm comm, float* grads, const coll::GradientLayout& layout, const std::string& backend,
                  const std::vector<std::string>& algorithms = {});
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // How the following steps overlap (once, before the first step; the default is progress): thread
  // starts the communication thread, bound as the choice says, and binds this thread to the rest.
  void set_overlap(const OverlapChoice& overlap);
  // Whether buckets may stream (see the header; the default is yes). Only between steps.
  void set_streaming(bool allowed) { streaming_allowed_ = allowed; }
  // Whether the buckets of an algorithm whose program waits for its input (shm-seg's) stream:
  // allowed, progress or thread mode, the gradients in the node segment, not --shard.
  bool may_stream() const;
  const OverlapChoice& overlap() const { return overlap_choice_; }
  // --shard (shard.hpp): from the next configure on, bucket i is reduce-scattered into this rank's
  // block (in place, scaled) instead of allreduced, and gather_parameters all-gathers the
  // parameters' blocks; the algorithm configured must be ring and its buckets the shard's.
  // release_gradients (--shard gradients): after its reduce-scatter, a bucket's pages outside this
  // rank's block are released (shard.hpp's release_pages).
  void shard_buckets(const ParameterShard& shard, bool release_gradients) {
    shard_ = &shard;
    release_gradients_ = release_gradients;
  }
  // --shard, after the optimizer updated this rank's blocks: every bucket's parameters all-gathered
  // in place, blocking, on the calling thread (between steps of the communication thread).
  void gather_parameters(float* params);
  // The same all-gathers overlapped with the next forward (progress mode's machinery, on the
  // calling thread, between steps of the communication thread): start_gathers posts the first
  // ones and returns; gather_until(end) completes every bucket holding parameters at offsets
  // < end (blocking on those) and advances the rest; the buckets go in forward order, from the
  // last (whose tensors come first). Nothing else may use the reducer until gathering() is false.
  void start_gathers(float* params);
  void gather_until(std::size_t end);
  bool gathering() const { return gather_params_ != nullptr; }
  // Whether the configured algorithm's transport can overlap the all-gathers (progress).
  bool can_overlap_gathers() const { return transport_ && transport_->can_progress(); }
  // The gradient buffer's place in the node segment's arena (layout.total_numel() floats, living as
  // long as the reducer), made when an algorithm of the run reduces buffers in the segment; null
  // otherwise. Once the caller has moved its gradients there (before the first configure) and said
  // so, every algorithm reduces them in place: no bucket is copied in or out.
  float* segment_gradients() const { return reinterpret_cast<float*>(arena_grads_.data()); }
  void gradients_moved_to_segment();
  bool gradients_in_segment() const { return grads_ != nullptr && grads_ == segment_gradients(); }
  // The algorithm and bucket packing of the following steps (only between steps).
  void configure(const coll::Algorithm& algorithm, const coll::BucketCap& cap, std::size_t chunk_bytes);
  const std::vector<BucketSlice>& buckets() const { return buckets_; }
  // Whether the transports of algorithm a can run in progress mode.
  bool can_progress(const coll::Algorithm& a) { return transports_.for_algorithm(a).can_progress(); }
  // Whether a blocking wait on the backend spins (MPI) rather than sleeps (Gloo).
  bool backend_busy_polls() { return transports_.backend().busy_polls(); }

  // Starts a synchronising backward. scale multiplies the reduced gradients (1 / (ranks x
  // micro-batches) for a mean). overlap = false holds every bucket back until finish(), as mode
  // none (the no-overlap reference). verify: also check this step's result against MPI_Allreduce.
  void begin(float scale, bool overlap, bool verify);
  // Backward's hook: every gradient at offset >= offset is final. Progress mode: starts the ready
  // buckets and advances those in flight (called again with the same offset, it only advances).
  // Main thread only.
  void grads_ready(std::size_t offset);
  // Marks everything ready, completes every bucket and returns the seconds spent (exposed
  // communication). Rethrows the communication thread's error.
  double finish();
  const ExposedSplit& exposed() const { return exposed_; }
  // Progress mode, this step: wall and CPU time inside grads_ready() advancing buckets during
  // backward (communication inside the backward phase).
  double progress_s() const { return progress_s_; }
  double progress_cpu_s() const { return progress_cpu_s_; }
  // After finish() of a step begun with verify: checks the result against MPI_Allreduce; throws
  // CollectiveError (the same on every rank) naming the first wrong element. Collective.
  void verify();
  const std::vector<BucketTiming>& timings() const { return timings_; }
  // Test hook (--inject-fault corrupt:...): adds 1 to this rank's first reduced element in the
  // next step, after the allreduce, so the verification must catch it.
  void inject_corruption() { corrupt_next_ = true; }

 private:
  void start_bucket(std::size_t i);           // verification snapshot, start time, copy into the arena
  void end_bucket(std::size_t i);             // copy out of the arena, scaling, fault injection, end time
  float* bucket_buffer(std::size_t i) const;  // where bucket i is reduced (grads_ or the arena)
  // Bucket i's program bound in place on its buffer in ws, with this step's scale.
  coll::Bindings bind_bucket(std::size_t i, coll::Workspace& ws);
  void run_bucket_blocking(std::size_t i);
  void configure_sharded(const coll::Algorithm& algorithm);
  // --shard: this rank's block of bucket i (where its reduce-scatter leaves the result).
  std::size_t own_offset(std::size_t i) const;
  std::size_t own_size(std::size_t i) const;
  // Every gradient at offset >= offset is final (the watermark streamed buckets wait on).
  void gradients_final_from(std::size_t offset);
  // Progress mode: whether bucket i may start now (it is ready, or streamed and partly final).
  bool can_start(std::size_t i) const;
  bool streamed(std::size_t i) const { return streams_ && programs_[i].waits_input; }
  void advance_in_flight();          // progress mode
  void start_gather(std::size_t k);  // the k-th all-gather in forward order (bucket n - 1 - k)
  double finish_progress(double t0);
  double finish_blocking(double t0);
  double handshake_waits_after(double t0, double t_end) const;  // finish_thread, unstreamed
  double finish_thread(double t0);
  void communication_loop();

  MPI_Comm comm_ = MPI_COMM_NULL;  // the buckets' MPI traffic (and thread mode's handshakes)
  // The "every rank finished backward" barriers: on a communicator of their own, since in progress
  // mode a rank may enter one before or after starting a bucket's MPI_Iallreduce (in thread mode
  // before or after the thread's next handshake), and nonblocking collectives on one communicator
  // must start in the same order on every rank.
  MPI_Comm ready_comm_ = MPI_COMM_NULL;
  coll::Backends transports_;             // the buckets' data, on comm_
  coll::Transport* transport_ = nullptr;  // the configured algorithm's
  OverlapChoice overlap_choice_;
  int nranks_ = 1;
  float* grads_;
  coll::TransportBuffer arena_grads_;  // the gradients' place in the node segment (see the constructor)
  bool through_arena_ = false;         // the configured algorithm reduces in the arena
  // through_arena_ with the gradients elsewhere: each bucket is copied in and out.
  bool copies_through_arena() const { return through_arena_ && !gradients_in_segment(); }
  coll::GradientLayout layout_;
  const coll::Algorithm* algorithm_ = nullptr;
  std::size_t chunk_bytes_ = 1 << 20;
  std::vector<BucketSlice> buckets_;
  std::vector<coll::Program> programs_;         // per bucket (progress mode: with its slot's tags)
  const ParameterShard* shard_ = nullptr;       // --shard: reduce-scatter, then gather_parameters
  bool release_gradients_ = false;              // --shard gradients
  std::vector<coll::Program> gather_programs_;  // --shard: per bucket, the parameters' all-gather
  std::vector<BucketTiming> timings_;
  coll::Workspace workspace_;  // blocking runs
  std::array<coll::Workspace, kInFlight> slot_workspace_;
  std::array<coll::ProgressedRun, kInFlight> runs_;
  float scale_ = 1;
  bool overlap_ = true, verify_ = false, corrupt_next_ = false;
  std::vector<double> snapshot_;  // pre-reduction gradients of a verified step
  std::size_t produced_ = 0;      // buckets backward has completed (main thread only)
  // Gradients at offsets >= it are final: written by the main thread only (release order after
  // the gradients), read by the programs of streamed buckets (thread mode: on the other thread).
  std::atomic<std::size_t> final_from_{0};
  // Steps whose gradients have all become final so far, the same count on every rank: with a node
  // segment each is marked there as it happens (finish_thread's split).
  std::uint64_t steps_all_final_ = 0;
  // This step streams: progress or thread mode with the gradients in the node segment, where a
  // program that waits for its input (shm-seg's) starts once its bucket's last chunk is final and
  // reduces each chunk as every rank finishes it, not when the whole bucket is.
  bool streams_ = false;
  bool streaming_allowed_ = true;
  // Progress mode: buckets [0, finished_) are done; [finished_, started_) are in flight.
  std::size_t started_ = 0, finished_ = 0;
  // Overlapped all-gathers: the parameters they fill, and [gathered_, gathers_started_) in flight
  // (counted in forward order).
  float* gather_params_ = nullptr;
  std::size_t gathers_started_ = 0, gathered_ = 0;
  double progress_s_ = 0, progress_cpu_s_ = 0;
  ExposedSplit exposed_;

  std::mutex mutex_;
  // Thread mode: held around each MPI call of the thread's handshakes and of finish_thread's
  // barrier, the only MPI calls the two threads can make at once (MPI_THREAD_SERIALIZED).
  std::mutex mpi_calls_;
  std::condition_variable cv_;
  // Buckets [0, num_ready_) may be reduced (guarded by mutex_); streaming, the last of them may
  // still be partly written (its program waits for each chunk).
  std::size_t num_ready_ = 0;
  std::size_t num_done_ = 0;  // buckets [0, num_done_) are reduced (guarded by mutex_)
  bool in_step_ = false, stop_ = false, busy_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // thread mode only
};

}  // namespace sp::dp
