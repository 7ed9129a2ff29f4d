#include "harness.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "bf16.hpp"
#include "core/error.hpp"
#include "core/cache_flush.hpp"

namespace sp::coll {

int auto_iters(std::size_t bytes) {
  double n = std::ceil(256.0 * (1 << 20) / double(std::max<std::size_t>(bytes, 1)));
  return static_cast<int>(std::clamp(n, 10.0, 1000.0));
}

int auto_warmup(int iters) { return std::clamp(iters / 10, 2, 100); }

CaseBuffers::CaseBuffers(std::size_t bytes, bool in_place) : in_place_(in_place) {
  send_.assign(std::max<std::size_t>(bytes, 1), std::byte{0});
  if (!in_place) recv_.assign(send_.size(), std::byte{0});
}

void CaseBuffers::evict_from_cache() const {
  flush_from_cache(send_.data(), send_.size());
  if (!in_place_) flush_from_cache(recv_.data(), recv_.size());
}

TimedRun time_case(const CaseSpec& spec, const TimingOptions& opt, int iters, int warmup,
                   MPI_Comm comm, Workspace& ws) {
  CaseBuffers buf(spec.bytes(), spec.in_place);
  const AllreduceArgs args{buf.send(), buf.recv(), spec.count, spec.dtype, spec.op, comm, &ws, spec.chunk_bytes};
  for (int i = 0; i < warmup; ++i) spec.algorithm->run(args);
  TimedRun run;
  run.samples.reserve(iters);
  SP_MPI_CHECK(MPI_Barrier(comm));
  double rq0 = thread_runqueue_wait_seconds();
  PhaseTimer timer;
  for (int i = 0; i < iters; ++i) {
    if (opt.off_cache) buf.evict_from_cache();
    if (opt.barrier) SP_MPI_CHECK(MPI_Barrier(comm));
    timer.start();
    spec.algorithm->run(args);
    run.samples.push_back(timer.stop());
  }
  double rq1 = thread_runqueue_wait_seconds();
  run.runqueue_wait_s = (rq0 >= 0 && rq1 >= 0) ? rq1 - rq0 : -1;
  return run;
}

namespace {

// Small integers: exact in every dtype, and sums over up to 256/amplitude ranks stay exact in
// bf16 (8 significant bits).
int pattern_amplitude(Dtype d, int nranks) {
  if (d != Dtype::bf16) return 8;
  return std::clamp(256 / std::max(nranks, 1), 1, 8);
}

int pattern_value(int rank, std::size_t i, int amplitude) {
  return static_cast<int>((rank * 7 + i * 3) % (2 * amplitude + 1)) - amplitude;
}

void store(void* buf, std::size_t i, Dtype d, double v) {
  switch (d) {
    case Dtype::f32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
    case Dtype::f64: static_cast<double*>(buf)[i] = v; break;
    case Dtype::i32: static_cast<std::int32_t*>(buf)[i] = static_cast<std::int32_t>(v); break;
    case Dtype::bf16: static_cast<std::uint16_t*>(buf)[i] = float_to_bf16(static_cast<float>(v)); break;
  }
}

}  // namespace

void fill_pattern(void* buf, std::size_t count, Dtype d, int rank, int nranks) {
  int amp = pattern_amplitude(d, nranks);
  for (std::size_t i = 0; i < count; ++i) store(buf, i, d, pattern_value(rank, i, amp));
}

void fill_expected(void* buf, std::size_t count, Dtype d, Op o, int nranks) {
  int amp = pattern_amplitude(d, nranks);
  for (std::size_t i = 0; i < count; ++i) {
    int acc = pattern_value(0, i, amp);
    for (int r = 1; r < nranks; ++r) {
      int v = pattern_value(r, i, amp);
      acc = o == Op::sum ? acc + v : o == Op::max ? std::max(acc, v) : std::min(acc, v);
    }
    store(buf, i, d, acc);
  }
}

std::size_t count_mismatches(const void* got, const void* want, std::size_t count, Dtype d) {
  // Inputs are exact small integers, so results must match bit for bit.
  const auto* a = static_cast<const unsigned char*>(got);
  const auto* b = static_cast<const unsigned char*>(want);
  std::size_t es = size_of(d), wrong = 0;
  for (std::size_t i = 0; i < count; ++i) wrong += std::memcmp(a + i * es, b + i * es, es) != 0;
  return wrong;
}

long long verify_case(const CaseSpec& spec, MPI_Comm comm, Workspace& ws) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::size_t bytes = std::max<std::size_t>(spec.bytes(), 1);
  std::vector<std::byte> send(bytes), recv(bytes), want(bytes), original(bytes);
  fill_pattern(send.data(), spec.count, spec.dtype, rank, size);
  fill_expected(want.data(), spec.count, spec.dtype, spec.op, size);
  original = send;
  void* in = send.data();
  void* out = spec.in_place ? send.data() : recv.data();
  spec.algorithm->run({in, out, spec.count, spec.dtype, spec.op, comm, &ws, spec.chunk_bytes});
  long long wrong = static_cast<long long>(count_mismatches(out, want.data(), spec.count, spec.dtype));
  // Out of place must leave the input untouched.
  if (!spec.in_place) wrong += static_cast<long long>(count_mismatches(send.data(), original.data(), spec.count, spec.dtype));
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, comm));
  return wrong;
}

CaseStats case_stats(const TimedRun& run, MPI_Comm comm) {
  std::vector<double> wall, cpu;
  for (const PhaseSample& s : run.samples) {
    wall.push_back(s.wall_s);
    cpu.push_back(s.cpu_s);
  }
  CaseStats st;
  st.mean = spread_across_ranks(summarize(wall).mean, comm);
  std::vector<double> slowest = max_across_ranks(wall, comm);
  st.iteration = summarize(slowest);
  st.cpu_mean_s = spread_across_ranks(summarize(cpu).mean, comm).mean;
  double rq = run.samples.empty() ? 0 : run.runqueue_wait_s / double(run.samples.size());
  RankSpread rqs = spread_across_ranks(run.runqueue_wait_s < 0 ? -1e300 : rq, comm);
  st.runqueue_wait_s = rqs.min < 0 ? -1 : rqs.mean;
  return st;
}

void append_timing_columns(Table& t, const CaseStats& st, const std::string& unit) {
  auto us = [](double s) { return s * 1e6; };
  t.reals("t_min_us", "us", "fastest rank's mean time per " + unit).push_back(us(st.mean.min));
  t.reals("t_mean_us", "us", "mean over ranks of each rank's mean time per " + unit).push_back(us(st.mean.mean));
  t.reals("t_max_us", "us", "slowest rank's mean time per " + unit).push_back(us(st.mean.max));
  t.ints("slowest_rank", "", "rank with the largest mean time").push_back(st.mean.slowest_rank);
  t.reals("p50_us", "us", "median over " + unit + "s of the per-" + unit + " maximum over ranks")
      .push_back(us(st.iteration.median));
  t.reals("p99_us", "us", "99th percentile over " + unit + "s of the per-" + unit + " maximum over ranks")
      .push_back(us(st.iteration.p99));
  t.reals("cpu_mean_us", "us", "mean thread CPU time per " + unit).push_back(us(st.cpu_mean_s));
  t.reals("runqueue_wait_us", "us", "mean run-queue wait per " + unit + " (-1 unknown)")
      .push_back(st.runqueue_wait_s < 0 ? -1 : us(st.runqueue_wait_s));
}

}  // namespace sp::coll
