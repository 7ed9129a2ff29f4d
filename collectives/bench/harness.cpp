#include "collectives/bench/harness.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cmath>

#include "core/run/error.hpp"
#include "core/run/program.hpp"
#include "core/measure/cache_flush.hpp"
#include "core/run/sizes.hpp"

namespace sp::coll {

int auto_iters(std::size_t bytes) {
  double n = std::ceil(256.0 * (1 << 20) / double(std::max<std::size_t>(bytes, 1)));
  return static_cast<int>(std::clamp(n, 10.0, 1000.0));
}

int auto_warmup(int iters) { return std::clamp(iters / 10, 2, 100); }

CaseBuffers::CaseBuffers(const CaseSpec& spec, int rank, int nranks, Transport& transport)
    : transport_(transport), in_place_(spec.in_place) {
  const std::size_t bytes = std::max<std::size_t>(spec.bytes(), 1);
  send_ = filled_buffer(transport, bytes, [&](std::byte* p) { fill_pattern(p, spec.count, spec.dtype, rank, nranks); });
  other_ = transport.allocate(bytes);
  if (in_place_) transport.copy(other_.data(), send_.data(), bytes);  // the pattern, kept for restore()
}

void CaseBuffers::restore() {
  if (in_place_) transport_.copy(send_.data(), other_.data(), send_.size());
}

std::uint64_t CaseBuffers::evict_from_cache() const {
  if (transport_.on_device()) return 0;
  flush_from_cache(send_.data(), send_.size());
  if (in_place_) return send_.size();
  flush_from_cache(other_.data(), other_.size());
  return send_.size() + other_.size();
}

TimedRun time_calls(BenchCase& c, const LoopOptions& opt, MPI_Comm comm) {
  Transport& transport = c.transport();
  for (int i = 0; i < opt.warmup; ++i) {
    c.reset();
    c.call(-1);
  }
  transport.synchronize();
  TimedRun run;
  run.samples.reserve(opt.iters);
  SP_MPI_CHECK(MPI_Barrier(comm));
  const double rq0 = thread_runqueue_wait_seconds();
  PhaseTimer timer;
  for (int i = 0; i < opt.iters; ++i) {
    c.reset();  // before the eviction, so --off-cache still starts every call cold
    transport.synchronize();
    if (opt.off_cache) run.evicted_bytes += c.evict_from_cache();
    if (opt.barrier) SP_MPI_CHECK(MPI_Barrier(comm));
    timer.start();
    transport.mark();
    c.call(i);
    const double device_s = transport.seconds_since_mark();
    transport.synchronize();
    run.samples.push_back(timer.stop());
    if (device_s >= 0) run.device_s.push_back(device_s);
  }
  const double rq1 = thread_runqueue_wait_seconds();
  run.runqueue_wait_s = (rq0 >= 0 && rq1 >= 0) ? rq1 - rq0 : -1;
  return run;
}

AllreduceCase::AllreduceCase(const CaseSpec& spec, MPI_Comm comm, Transport& transport, Workspace& ws)
    : spec_(spec), transport_(transport), ws_(ws), comm_(comm) {
  SP_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  SP_MPI_CHECK(MPI_Comm_size(comm, &size_));
}

CaseBuffers& AllreduceCase::buffers() {
  if (!buffers_) buffers_ = std::make_unique<CaseBuffers>(spec_, rank_, size_, transport_);
  return *buffers_;
}

void AllreduceCase::call(int) {
  spec_.algorithm->run(
      {buffers().send(), buffers().recv(), spec_.count, spec_.dtype, spec_.op, &transport_, &ws_, spec_.chunk_bytes});
}

long long AllreduceCase::verify() {
  buffers_.reset();  // the timed loop's two buffers, before verification's three (case_memory_bytes)
  const std::size_t bytes = std::max<std::size_t>(spec_.bytes(), 1);
  auto pattern = [&](std::byte* p) { fill_pattern(p, spec_.count, spec_.dtype, rank_, size_); };
  TransportBuffer send = filled_buffer(transport_, bytes, pattern);
  TransportBuffer recv = spec_.in_place ? TransportBuffer{} : transport_.allocate(bytes);
  // The expected result is the same on every rank and costs O(count x ranks) to compute. In the
  // simulated build every rank is a simulated process of this one process, so rank 0 computes it
  // once and the others compare against its buffer (its address broadcast): O(count x ranks) in
  // all instead of O(count x ranks^2), minutes of CPU at 1024 simulated ranks.
  const bool shared_want = kSimulatedBuild && size_ > 1;
  TransportBuffer want;
  if (!shared_want || rank_ == 0)
    want = filled_buffer(transport_, bytes,
                         [&](std::byte* p) { fill_expected(p, spec_.count, spec_.dtype, spec_.op, size_); });
  const void* want_data = want.data();
  if (shared_want) {
    auto address = reinterpret_cast<std::uintptr_t>(want_data);
    SP_MPI_CHECK(MPI_Bcast(&address, sizeof address, MPI_BYTE, 0, comm_));
    want_data = reinterpret_cast<const void*>(address);
  }
  void* out = spec_.in_place ? send.data() : recv.data();
  spec_.algorithm->run({send.data(), out, spec_.count, spec_.dtype, spec_.op, &transport_, &ws_, spec_.chunk_bytes});
  long long wrong = static_cast<long long>(transport_.count_mismatches(out, want_data, spec_.count, spec_.dtype));
  if (shared_want) SP_MPI_CHECK(MPI_Barrier(comm_));  // every rank compared before rank 0 reuses its buffer
  // Out of place must leave the input untouched: the pattern again, into the expected buffer where
  // this rank has one (at most three buffers at once, case_memory_bytes).
  if (!spec_.in_place) {
    if (want.data() == nullptr) want = transport_.allocate(bytes);
    fill_buffer(transport_, want, pattern);
    wrong += static_cast<long long>(transport_.count_mismatches(send.data(), want.data(), spec_.count, spec_.dtype));
  }
  return wrong;
}

CollectiveCase::CollectiveCase(const CaseSpec& spec, MPI_Comm comm, Transport& transport, Workspace& ws)
    : spec_(spec), transport_(transport), ws_(ws) {
  SP_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  SP_MPI_CHECK(MPI_Comm_size(comm, &size_));
}

CollectiveCase::Buffers& CollectiveCase::buffers() {
  if (!buffers_) {
    const std::size_t elem = size_of(spec_.dtype);
    buffers_ = std::make_unique<Buffers>();
    const CallCounts n = call_counts(call(), size_, rank_);
    buffers_->send = filled_buffer(transport_, std::max<std::size_t>(n.send * elem, 1),
                                   [&](std::byte* p) { fill_input(call(), p, spec_.dtype, rank_, size_); });
    if (!info(collective()).one_buffer) buffers_->recv = transport_.allocate(std::max<std::size_t>(n.recv * elem, 1));
  }
  return *buffers_;
}

std::uint64_t CollectiveCase::evict_from_cache() {
  if (transport_.on_device()) return 0;
  Buffers& b = buffers();
  flush_from_cache(b.send.data(), b.send.size());
  if (b.recv.data()) flush_from_cache(b.recv.data(), b.recv.size());
  return b.send.size() + b.recv.size();
}

void CollectiveCase::run(const void* send, void* recv) {
  spec_.algorithm->run({send, recv, spec_.count, spec_.dtype, spec_.op, &transport_, &ws_, spec_.chunk_bytes,
                        spec_.root, spec_.imbalance});
}

void CollectiveCase::call(int) { run(buffers().send.data(), buffers().out()); }

long long CollectiveCase::verify() {
  buffers_.reset();  // the timed loop's buffers, before verification's three
  const Collective c = collective();
  const CallCounts n = call_counts(call(), size_, rank_);
  const std::size_t elem = size_of(spec_.dtype), sends = n.send, recvs = n.recv;
  auto input = [&](std::byte* p) { fill_input(call(), p, spec_.dtype, rank_, size_); };
  TransportBuffer send = filled_buffer(transport_, std::max<std::size_t>(sends * elem, 1), input);
  const bool one_buffer = info(c).one_buffer;
  TransportBuffer recv = one_buffer ? TransportBuffer{} : transport_.allocate(std::max<std::size_t>(recvs * elem, 1));
  void* out = one_buffer ? send.data() : recv.data();
  run(send.data(), out);
  long long wrong = 0;
  if (output_checked(call(), rank_)) {
    TransportBuffer want = filled_buffer(transport_, std::max<std::size_t>(recvs * elem, 1), [&](std::byte* p) {
      fill_output_expected(call(), p, spec_.dtype, spec_.op, rank_, size_);
    });
    wrong += static_cast<long long>(transport_.count_mismatches(out, want.data(), recvs, spec_.dtype));
  }
  if (one_buffer) return wrong;  // the input was the output
  recv = {};                     // at most three buffers at once (case_memory_bytes)
  TransportBuffer unchanged = filled_buffer(transport_, std::max<std::size_t>(sends * elem, 1), input);
  wrong += static_cast<long long>(transport_.count_mismatches(send.data(), unchanged.data(), sends, spec_.dtype));
  return wrong;
}

std::unique_ptr<BenchCase> make_case(const CaseSpec& spec, MPI_Comm comm, Transport& transport, Workspace& ws) {
  if (spec.algorithm->collective == Collective::allreduce)
    return std::make_unique<AllreduceCase>(spec, comm, transport, ws);
  return std::make_unique<CollectiveCase>(spec, comm, transport, ws);
}

TimedRun time_case(const CaseSpec& spec, const TimingOptions& opt, int iters, int warmup, MPI_Comm comm,
                   Transport& transport, Workspace& ws) {
  AllreduceCase c(spec, comm, transport, ws);
  return time_calls(c, {iters, warmup, opt.barrier, opt.off_cache}, comm);
}

long long verify_case(const CaseSpec& spec, MPI_Comm comm, Transport& transport, Workspace& ws) {
  long long wrong = make_case(spec, comm, transport, ws)->verify();
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, comm));
  return wrong;
}

std::uint64_t case_memory_bytes(const Algorithm& a, std::uint64_t bytes, std::uint64_t chunk_bytes) {
  const char* what = "memory for the case's buffers";
  return checked_sum(checked_product(3, bytes, what), a.workspace_bytes(bytes, chunk_bytes), what);
}

std::uint64_t rank_memory_budget(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  int node_ranks = 1;
  SP_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  SP_MPI_CHECK(MPI_Comm_size(node, &node_ranks));
  SP_MPI_CHECK(MPI_Comm_free(&node));
  const std::uint64_t memory = physical_memory_bytes();
  unsigned long long budget = memory > 0 ? memory / std::uint64_t(std::max(node_ranks, 1)) : UINT64_MAX;
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &budget, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm));
  return budget;
}

CaseStats case_stats(const TimedRun& run, MPI_Comm comm, bool counted) {
  std::vector<double> wall, cpu;
  for (const PhaseSample& s : run.samples) {
    wall.push_back(s.wall_s);
    cpu.push_back(s.cpu_s);
  }
  CaseStats st;
  if (!counted) std::fill(wall.begin(), wall.end(), 0.0);  // no part in the slowest rank's time either
  st.mean = spread_across_ranks(summarize(wall).mean, comm, counted);
  std::vector<double> slowest = max_across_ranks(wall, comm);
  st.iteration = summarize(slowest);
  st.cpu_mean_s = spread_across_ranks(summarize(cpu).mean, comm, counted).mean;
  double rq = run.samples.empty() ? 0 : run.runqueue_wait_s / double(run.samples.size());
  RankSpread rqs = spread_across_ranks(run.runqueue_wait_s < 0 ? -1e300 : rq, comm, counted);
  st.runqueue_wait_s = rqs.min < 0 ? -1 : rqs.mean;
  return st;
}

}  // namespace sp::coll
