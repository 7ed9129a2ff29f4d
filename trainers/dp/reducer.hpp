// The gradient reducer of the data-parallel engine: DDP-style bucketed allreduce of a model's
// flat gradient buffer, overlapped with backward.
//
// How it overlaps. The buffer holds the parameter tensors in forward (registration) order and
// backward finishes them from the end of the buffer towards offset 0. Buckets are packed as DDP
// does (collectives/buckets.hpp: reverse order, first bucket 1 MiB, later ones at the cap), so
// every bucket is one contiguous slice of the forward-ordered buffer and backward completes the
// buckets in index order. Backward reports a watermark, grads_ready(offset): every gradient at
// offset >= offset is final. Buckets below the watermark are handed to a communication thread
// that allreduces them in place, one after the other in bucket order (the same order on every
// rank, which is what keeps the ranks' collectives matched), and scales them by 1/(ranks x
// micro-batches) so the result is the mean. finish() waits for the remaining buckets: the time
// it blocks is the exposed communication.
//
// Why a thread and not non-blocking collectives: every algorithm in collectives/ (ring, tree,
// ...) is written on blocking point-to-point calls, and a thread lets each of them progress while
// backward computes without being rewritten as a state machine; MPI_Iallreduce would also only
// progress inside MPI calls, which backward does not make. MPI must provide at least
// MPI_THREAD_SERIALIZED: only one thread calls MPI at a time (the communication thread during a
// synchronising backward, the main thread otherwise; finish() is the hand-over).
//
// Why a handshake before each bucket: MPI libraries busy-poll while a blocking call waits for a
// peer, so a communication thread that enters an allreduce while a peer is still computing burns
// a core the compute threads need (on 2 cores and 2 ranks it slowed backward by ~8 %, more than
// the overlap saved). Each bucket therefore starts with an MPI_Ibarrier polled with MPI_Test every
// 50 us, sleeping in between: the thread waits for its peers without spinning, and the blocking
// algorithm then runs with every rank ready. The wait is recorded (BucketTiming::peers_s).
#pragma once
#include <mpi.h>

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/backend.hpp"
#include "collectives/buckets.hpp"

namespace sp::dp {

// Checks result[i] == scale x (sum over ranks of inputs[i]) for every element, against
// MPI_Allreduce in double precision, within the float rounding bound of a p-term sum. Collective
// over comm; throws CollectiveError (the same on every rank) naming the first wrong element.
// what: names the operation in the message, e.g. "gradient allreduce (ring)".
void check_mean_against_reference(MPI_Comm comm, std::vector<double> inputs, const float* result, double scale,
                                  const std::string& what);

// One bucket as a slice of the forward-ordered buffer.
struct BucketSlice {
  std::size_t offset = 0;  // first element
  std::size_t numel = 0;
  int num_tensors = 0;
};
// The packing of pack_buckets() expressed as slices of the forward-ordered buffer, in the order
// backward completes them (decreasing offset).
std::vector<BucketSlice> bucket_slices(const coll::GradientLayout& layout, const coll::BucketCap& cap);

// Times of one bucket in one step, on this rank's clock (wall_seconds()).
struct BucketTiming {
  double ready_s = 0;  // backward produced its last gradient
  double start_s = 0;  // the communication thread took it up (handshake, then allreduce)
  double peers_s = 0;  // of which waiting in the handshake until every rank had it ready
  double end_s = 0;    // allreduce and scaling done
  double cpu_s = 0;    // communication thread CPU time spent on it
};

class GradientReducer {
 public:
  // comm is duplicated so the engine's messages never match anyone else's. grads: the flat
  // buffer (forward order, layout.total_numel() floats), which must outlive the reducer.
  // backend: the transport the buckets travel on (collectives/backend.hpp), connected here.
  GradientReducer(MPI_Comm comm, float* grads, const coll::GradientLayout& layout, const std::string& backend);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // The algorithm and bucket packing of the following steps (only between steps).
  void configure(const coll::Algorithm& algorithm, const coll::BucketCap& cap, std::size_t chunk_bytes);
  const std::vector<BucketSlice>& buckets() const { return buckets_; }

  // Starts a synchronising backward. scale multiplies the reduced gradients (1 / (ranks x
  // micro-batches) for a mean). overlap = false holds every bucket back until finish() (the
  // no-overlap baseline). verify: also check this step's result against MPI_Allreduce.
  void begin(float scale, bool overlap, bool verify);
  // Backward's hook: every gradient at offset >= offset is final. Cheap; main thread only.
  void grads_ready(std::size_t offset);
  // Marks everything ready, waits for the communication thread and returns the seconds spent
  // waiting (exposed communication). Rethrows the communication thread's error.
  double finish();
  // After finish() of a step begun with verify: checks the result against MPI_Allreduce; throws
  // CollectiveError (the same on every rank) naming the first wrong element. Collective.
  void verify();
  const std::vector<BucketTiming>& timings() const { return timings_; }
  // Test hook (--inject-fault corrupt:...): adds 1 to this rank's first reduced element in the
  // next step, after the allreduce, so the verification must catch it.
  void inject_corruption() { corrupt_next_ = true; }

 private:
  void communication_loop();

  MPI_Comm comm_ = MPI_COMM_NULL;             // the communication thread's own
  coll::Backends transports_;                  // the buckets' data, on comm_
  coll::Transport* transport_ = nullptr;       // the configured algorithm's
  int nranks_ = 1;
  float* grads_;
  coll::GradientLayout layout_;
  const coll::Algorithm* algorithm_ = nullptr;
  std::size_t chunk_bytes_ = 1 << 20;
  std::vector<BucketSlice> buckets_;
  std::vector<BucketTiming> timings_;
  coll::Workspace workspace_;
  float scale_ = 1;
  bool overlap_ = true, verify_ = false, corrupt_next_ = false;
  std::vector<double> snapshot_;  // pre-reduction gradients of a verified step
  std::size_t produced_ = 0;      // buckets backward has completed (main thread only)

  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t num_ready_ = 0;  // buckets [0, num_ready_) may be reduced (guarded by mutex_)
  std::size_t num_done_ = 0;   // buckets [0, num_done_) are reduced (guarded by mutex_)
  bool in_step_ = false, stop_ = false, busy_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace sp::dp
