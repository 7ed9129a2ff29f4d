// The allreduce benchmark harness shared by allreduce_perf and bucket_sweep: case buffers, the
// timed loop (optionally starting every call with its buffers evicted from the cache), verification
// against a sequential reference, and statistics across ranks. Algorithms know nothing of this.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/pattern.hpp"
#include "core/measure/stats.hpp"
#include "core/measure/table.hpp"
#include "core/measure/timer.hpp"

namespace sp::coll {

struct CaseSpec {
  const Algorithm* algorithm = nullptr;
  Dtype dtype = Dtype::f32;
  Op op = Op::sum;
  bool in_place = false;
  std::size_t count = 0;
  std::size_t chunk_bytes = 1 << 20;
  int root = 0;          // of a rooted collective (broadcast, reduce)
  double imbalance = 0;  // of an all-to-allv (collective.hpp)
  std::size_t bytes() const { return count * size_of(dtype); }
};

struct TimingOptions {
  int iters = 0;           // 0: adapt to the message size (auto_iters)
  int warmup = -1;         // -1: adapt to iters (auto_warmup)
  bool barrier = false;    // MPI_Barrier before every timed iteration (not timed)
  bool off_cache = false;  // evict the call's buffers from every cache level before it (untimed)
};

// About 256 MiB of traffic per case, at least 10 and at most 1000 iterations.
int auto_iters(std::size_t bytes);
int auto_warmup(int iters);

// Send/receive memory for the timed loop, in the transport's memory (host, or the GPU of a device
// transport), holding the verification pattern (fill_pattern) so the timed calls reduce the same
// non-zero data the verification checks. Out of place the send buffer is never written; in place
// restore() copies the pattern back before every call (untimed), so repeated in-place sums never
// grow: no overflow (i32), infinities (f32, bf16) or rounding.
class CaseBuffers {
 public:
  CaseBuffers(const CaseSpec& spec, int rank, int nranks, Transport& transport);
  void* send() { return send_.data(); }
  void* recv() { return in_place_ ? send_.data() : other_.data(); }
  // In place: the pattern back into the buffer the last call overwrote. Out of place: nothing.
  void restore();
  // --off-cache: the next call finds neither buffer in any cache. IMB rotates through buffers
  // larger than the cache instead, which costs gigabytes per rank under a 500 MiB L3.
  // Returns the bytes evicted (0 for device memory: the host's caches do not hold it).
  std::uint64_t evict_from_cache() const;

 private:
  Transport& transport_;
  bool in_place_;
  TransportBuffer send_, other_;  // other_: the receive buffer, or in place the pattern
};

// Writes b (t's memory) with fill, which writes host memory: in place on the host, through a host
// copy for device memory.
template <typename Fill>
void fill_buffer(const Transport& t, const TransportBuffer& b, Fill fill) {
  if (!t.holds_data()) return;  // timing only (timing_only.hpp): nothing will read it
  if (!t.on_device()) {
    fill(b.data());
    return;
  }
  std::vector<std::byte> host(b.size());
  fill(host.data());
  t.from_host(b.data(), host.data(), b.size());
}
// A new buffer of `bytes` in t's memory, written by fill.
template <typename Fill>
TransportBuffer filled_buffer(const Transport& t, std::size_t bytes, Fill fill) {
  TransportBuffer b = t.allocate(bytes);
  fill_buffer(t, b, fill);
  return b;
}

// The timings of one case's timed loop, this rank's.
struct TimedRun {
  std::vector<PhaseSample> samples;  // one per iteration, this rank
  std::vector<double> device_s;      // the same calls on the transport's own clock (empty: it has none)
  double runqueue_wait_s = -1;       // this rank's run-queue wait over the timed loop (-1 unknown)
  std::uint64_t evicted_bytes = 0;   // bytes evicted from the cache before timed calls (--off-cache)
};

// One case as a benchmark runs it (collectives/bench/driver.hpp): its buffers, its call and its check.
class BenchCase {
 public:
  virtual ~BenchCase() = default;
  virtual Transport& transport() = 0;
  // Untimed, before every call: what the previous call overwrote back to the verification pattern.
  virtual void reset() = 0;
  // --off-cache, untimed: evicts what the next call touches from every cache level; bytes evicted.
  virtual std::uint64_t evict_from_cache() = 0;
  // One call: iter >= 0 for a timed one (a case may record samples of its parts under it), -1 untimed.
  virtual void call(int iter) = 0;
  // After the timed loop: one call on the verification pattern checked against the sequential
  // reference; the elements wrong on this rank. It may free the timed loop's buffers first.
  virtual long long verify() = 0;
  // Whether this rank takes part (p2p_perf --pairs each: only the pair's two ranks do; the others'
  // calls are empty): only those ranks' times make the case's statistics and samples.
  virtual bool takes_part() const { return true; }
};

struct LoopOptions {
  int iters = 1;
  int warmup = 0;
  bool barrier = false;    // MPI_Barrier before every timed call (untimed)
  bool off_cache = false;  // evict_from_cache before every timed call (untimed)
};

// The timed loop, written once: warmup untimed calls, then iters timed ones, each bracketed by a
// PhaseTimer and ending when the transport has finished it (Transport::synchronize: a device
// transport's stream drained), timed on the transport's own clock too where it has one. comm
// carries the loop's barriers; the case's transport its data.
TimedRun time_calls(BenchCase& c, const LoopOptions& opt, MPI_Comm comm);

// One allreduce of CaseSpec: CaseBuffers in the timed loop; verification with three fresh buffers
// (the timed loop's freed first: case_memory_bytes), the input checked unchanged out of place.
class AllreduceCase : public BenchCase {
 public:
  AllreduceCase(const CaseSpec& spec, MPI_Comm comm, Transport& transport, Workspace& ws);
  Transport& transport() override { return transport_; }
  void reset() override { buffers().restore(); }
  std::uint64_t evict_from_cache() override { return buffers().evict_from_cache(); }
  void call(int) override;
  long long verify() override;

 private:
  CaseSpec spec_;
  int rank_ = 0, size_ = 1;
  Transport& transport_;
  Workspace& ws_;
  MPI_Comm comm_;
  std::unique_ptr<CaseBuffers> buffers_;  // made at the first reset (untimed): verify alone needs none
  CaseBuffers& buffers();
};

// One call of a collective other than allreduce (collective.hpp): spec.count is the message
// (usable_count), the buffers hold call_counts' elements (broadcast: one buffer, in place). The
// input is never written, so the timed loop restores nothing; verification uses fresh buffers
// (case_memory_bytes), checks the output where the collective defines it and the input unchanged.
class CollectiveCase : public BenchCase {
 public:
  CollectiveCase(const CaseSpec& spec, MPI_Comm comm, Transport& transport, Workspace& ws);
  Transport& transport() override { return transport_; }
  void reset() override { buffers(); }
  std::uint64_t evict_from_cache() override;
  void call(int) override;
  long long verify() override;

 private:
  struct Buffers {
    TransportBuffer send, recv;  // recv empty: in place (the send buffer)
    void* out() { return recv.data() ? recv.data() : send.data(); }
  };
  Collective collective() const { return spec_.algorithm->collective; }
  CollectiveCall call() const { return {collective(), spec_.count, spec_.root, spec_.imbalance}; }
  Buffers& buffers();
  void run(const void* send, void* recv);
  CaseSpec spec_;
  int rank_ = 0, size_ = 1;
  Transport& transport_;
  Workspace& ws_;
  std::unique_ptr<Buffers> buffers_;
};

// The case of spec's algorithm: an AllreduceCase for an allreduce, else a CollectiveCase.
std::unique_ptr<BenchCase> make_case(const CaseSpec& spec, MPI_Comm comm, Transport& transport, Workspace& ws);

// One allreduce case's timed loop (time_calls on an AllreduceCase). comm carries the harness's own
// collectives (barriers, statistics); transport the algorithm's data.
TimedRun time_case(const CaseSpec& spec, const TimingOptions& opt, int iters, int warmup, MPI_Comm comm,
                   Transport& transport, Workspace& ws);

// Verification, outside the timer: rank r's element i is pattern_value(r, i, ...), a small
// pseudo-random integer, so every reduction is exact in every dtype and the expected result is
// computed locally. Returns the number of wrong elements summed over all ranks (collective).
long long verify_case(const CaseSpec& spec, MPI_Comm comm, Transport& transport, Workspace& ws);

// Peak bytes per rank a case of algorithm a on a message of `bytes` holds: verification's send,
// receive and expected buffers (3 x bytes; the timed loop holds 2 x bytes, freed before) plus the
// workspace the algorithm declares (Algorithm::workspace_bytes). sp::Error if it does not fit in
// 64 bits.
std::uint64_t case_memory_bytes(const Algorithm& a, std::uint64_t bytes, std::uint64_t chunk_bytes);
// What one rank may hold: this node's physical memory divided by the ranks of comm on it, the
// smallest over all ranks (collective; UINT64_MAX when no rank knows its memory).
std::uint64_t rank_memory_budget(MPI_Comm comm);

// Across-rank statistics of one timed case (collective; identical on every rank).
struct CaseStats {
  RankSpread mean;              // per-rank mean wall time, across ranks (t_min/t_mean/t_max, slowest rank)
  Summary iteration;            // per-iteration time = slowest rank's time in that iteration
  double cpu_mean_s = 0;        // mean over ranks and iterations of thread CPU time
  double runqueue_wait_s = -1;  // mean over ranks, per iteration (-1 unknown)
};
// counted: this rank's times count (BenchCase::takes_part); the spreads are over the ranks that count.
CaseStats case_stats(const TimedRun& run, MPI_Comm comm, bool counted = true);

// Bus bandwidth factor for allreduce: each rank sends and receives 2(n-1)/n of the data in a
// bandwidth-optimal algorithm, so busbw = algbw * 2(n-1)/n is comparable with link bandwidth.
inline double allreduce_busbw_factor(int nranks) { return nranks > 1 ? 2.0 * (nranks - 1) / nranks : 0.0; }

}  // namespace sp::coll
