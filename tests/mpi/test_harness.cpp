// The allreduce harness: verification catches wrong results, clobbered inputs and blocks shifted
// by the old pattern's period, the timed calls reduce the verification pattern (never zeros, and
// never a previous in-place sum), timing and cross-rank statistics name the slowest rank, and
// off-cache runs (buffers evicted before each call, counted) still verify.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>
#include <thread>

#include "collectives/bf16.hpp"
#include "collectives/algorithms/backend.hpp"
#include "collectives/bench/harness.hpp"
#include "collectives/transports/forwarding_transport.hpp"
#include "collectives/transports/node_segment.hpp"
#include "core/run/error.hpp"
#include "tests/lib/transport_under_test.hpp"

using namespace sp::coll;

namespace {

using sp::test::world_rank;
using sp::test::world_size;
// The algorithms' data through MPI on MPI_COMM_WORLD (made after MPI_Init, on first use).
Transport& world() {
  static const std::unique_ptr<Transport> t = make_mpi_transport(MPI_COMM_WORLD);
  return *t;
}
Transport* world_rail = nullptr;  // set by world_segment()
// The node's shared segment of MPI_COMM_WORLD and its rail (one node: each rank alone), made on
// first use, so the node-local algorithms and hier run as well (attach_world_segment).
NodeSegment* world_segment() {
  static MPI_Comm rail_comm = MPI_COMM_NULL;  // never freed: the process ends with the test
  static const std::unique_ptr<NodeSegment> segment = NodeSegment::create(MPI_COMM_WORLD, 1 << 20, &rail_comm);
  static const std::unique_ptr<Transport> rail = make_mpi_transport(rail_comm);
  world_rail = rail.get();
  return segment.get();
}
void attach_world_segment(Workspace& ws) {
  NodeSegment* segment = world_segment();
  ws.attach(segment, world_rail);
}
// The transport a case of alg allocates through: world(), or for the zero-copy placement world()
// with its buffers in the segment's arena.
Transport& world_for(const Algorithm& alg) {
  static const std::unique_ptr<Transport> in_segment = make_segment_memory(world(), *world_segment());
  return alg.buffers_in_segment ? *in_segment : world();
}

// MPI on MPI_COMM_WORLD with hooks around its library allreduce: the test doubles of a wrong,
// slow or input-checking algorithm are MPI's own allreduce on a transport that misbehaves.
class HookedWorld : public ForwardingTransport {
 public:
  HookedWorld() : ForwardingTransport(world()) {}
  using Hook = std::function<void(const void* send, void* recv, std::size_t count, Dtype d)>;
  Hook before, after;
  std::string_view name() const override { return "hooked-mpi"; }
  void library_allreduce(const void* s, void* r, std::size_t n, Dtype d, Op o) override {
    if (before) before(s, r, n, d);
    inner().library_allreduce(s, r, n, d, o);
    if (after) after(s, r, n, d);
  }
};

const Algorithm& kLibrary = find_algorithm("mpi");

// Correct result except one element on the last rank.
void off_by_one(const void*, void* recv, std::size_t count, Dtype) {
  if (world_rank() == world_size() - 1 && count > 3) static_cast<float*>(recv)[3] += 1.0f;
}
HookedWorld& off_by_one_world() {
  static HookedWorld t;
  t.after = off_by_one;
  return t;
}

// Correct result, but scribbles on the input of an out-of-place call.
HookedWorld& clobbering_world() {
  static HookedWorld t;
  t.after = [](const void* send, void* recv, std::size_t count, Dtype d) {
    if (send != recv && count > 0) std::memset(const_cast<void*>(send), 0, size_of(d));
  };
  return t;
}

// The last rank is slow.
HookedWorld& slow_last_world() {
  static HookedWorld t;
  t.before = [](const void*, void*, std::size_t, Dtype) {
    if (world_rank() == world_size() - 1) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  return t;
}

}  // namespace

TEST(Harness, VerificationPassesCorrectAlgorithms) {
  Workspace ws;
  attach_world_segment(ws);
  for (const Algorithm& alg : algorithms())
    for (bool in_place : {false, true})
      EXPECT_EQ(verify_case({&alg, Dtype::f32, Op::sum, in_place, 1000}, MPI_COMM_WORLD, world_for(alg), ws), 0)
          << alg.name;
}

TEST(Harness, VerificationCountsWrongElementsOnEveryRank) {
  Workspace ws;
  // Every rank learns the global count, so every rank can fail the run together.
  EXPECT_EQ(verify_case({&kLibrary, Dtype::f32, Op::sum, false, 100}, MPI_COMM_WORLD, off_by_one_world(), ws), 1);
}

TEST(Harness, VerificationCatchesAClobberedInput) {
  Workspace ws;
  EXPECT_EQ(verify_case({&kLibrary, Dtype::i32, Op::max, false, 10}, MPI_COMM_WORLD, clobbering_world(), ws),
            world_size());
  EXPECT_EQ(verify_case({&kLibrary, Dtype::i32, Op::max, true, 10}, MPI_COMM_WORLD, clobbering_world(), ws), 0);
}

TEST(Harness, StatisticsNameTheSlowestRank) {
  Workspace ws;
  TimingOptions opt;
  opt.barrier = true;
  TimedRun run =
      time_case({&kLibrary, Dtype::f32, Op::sum, false, 16}, opt, 5, 1, MPI_COMM_WORLD, slow_last_world(), ws);
  ASSERT_EQ(run.samples.size(), 5u);
  EXPECT_TRUE(run.device_s.empty());  // MPI has no clock of its own: the host clock times it
  CaseStats st = case_stats(run, MPI_COMM_WORLD);
  // With a barrier before each iteration, every rank's timed call includes the sleeper's 2 ms:
  // the others wait for it inside the allreduce.
  EXPECT_GE(st.iteration.median, 1.5e-3);
  EXPECT_GE(st.mean.max, st.mean.min);
  EXPECT_EQ(st.iteration.n, 5u);
  if (world_size() == 1) {
    EXPECT_EQ(st.mean.slowest_rank, 0);
  }
  // CPU time of a thread that sleeps is far below its wall time.
  EXPECT_LT(st.cpu_mean_s, st.mean.mean);
}

TEST(Harness, CaseBuffersShareMemoryOnlyInPlace) {
  CaseBuffers out_of_place({nullptr, Dtype::f32, Op::sum, false, 16}, world_rank(), world_size(), world());
  EXPECT_NE(out_of_place.send(), out_of_place.recv());
  CaseBuffers in_place({nullptr, Dtype::f32, Op::sum, true, 16}, world_rank(), world_size(), world());
  EXPECT_EQ(in_place.send(), in_place.recv());
  CaseBuffers empty({nullptr, Dtype::f32, Op::sum, false, 0}, world_rank(), world_size(), world());  // valid pointers
  EXPECT_NE(empty.send(), nullptr);
  EXPECT_EQ(empty.evict_from_cache(), 2u);
  EXPECT_EQ(out_of_place.evict_from_cache(), 2u * 64);
  EXPECT_EQ(in_place.evict_from_cache(), 64u);
}

// A transport that says its memory is a device's: MPI underneath, host memory in fact, every memory
// call counted. What the harness does with a device transport (NCCL) is checked through it here,
// where there is no GPU: buffers made, filled and compared through the transport, and the timed
// call ended by synchronize().
class CountingDevice final : public HookedWorld {
 public:
  mutable int allocations = 0, uploads = 0, copies = 0, comparisons = 0;
  int synchronizations = 0, marks = 0;
  std::string_view name() const override { return "counting-device"; }
  bool on_device() const override { return true; }
  TransportBuffer allocate(std::size_t bytes) const override {
    ++allocations;
    return Transport::allocate(bytes);
  }
  void copy(void* dst, const void* src, std::size_t bytes) const override {
    ++copies;
    Transport::copy(dst, src, bytes);
  }
  void from_host(void* dst, const void* host, std::size_t bytes) const override {
    ++uploads;
    Transport::copy(dst, host, bytes);
  }
  void synchronize() override { ++synchronizations; }
  void mark() override { ++marks; }
  double seconds_since_mark() override { return 1e-3 * marks; }  // a clock of its own: the k-th call took k ms
  std::size_t count_mismatches(const void* got, const void* want, std::size_t count, Dtype d) const override {
    ++comparisons;
    return Transport::count_mismatches(got, want, count, d);
  }
};

TEST(Harness, DeviceTransportBuffersAreMadeFilledAndComparedThroughIt) {
  CountingDevice dev;
  Workspace ws;
  const Algorithm& ring = find_algorithm("ring");
  // Out of place: send (uploaded pattern), recv, expected (uploaded), then the input's pattern again
  // uploaded into the expected buffer.
  EXPECT_EQ(verify_case({&ring, Dtype::f32, Op::sum, false, 1000}, MPI_COMM_WORLD, dev, ws), 0);
  EXPECT_EQ(dev.uploads, 3);
  EXPECT_EQ(dev.comparisons, 2);
  // send, recv and expected (the expected buffer is refilled with the pattern in place), and with
  // several ranks the ring's scratch in the workspace.
  EXPECT_EQ(dev.allocations, world_size() > 1 ? 4 : 3);
  // An off-by-one result is still found when the comparison is the transport's.
  dev.after = off_by_one;
  EXPECT_EQ(verify_case({&kLibrary, Dtype::f32, Op::sum, true, 100}, MPI_COMM_WORLD, dev, ws), 1);
}

TEST(Harness, DeviceTransportTimesOnItsClockEndsAtSynchronizeAndEvictsNothing) {
  CountingDevice dev;
  Workspace ws;
  TimingOptions opt;
  opt.off_cache = true;  // the host's caches do not hold device memory: nothing to evict
  const int iters = 4, warmup = 2;
  TimedRun run = time_case({&find_algorithm("ring"), Dtype::f32, Op::sum, true, 4096}, opt, iters, warmup,
                           MPI_COMM_WORLD, dev, ws);
  EXPECT_EQ(run.samples.size(), std::size_t(iters));
  EXPECT_EQ(run.evicted_bytes, 0u);
  EXPECT_EQ(dev.synchronizations, 1 + 2 * iters);  // after the warm-up; after each restore and each call
  EXPECT_GE(dev.copies, warmup + iters);           // in place: restore() copies the pattern back on the device
  // Every timed call also on the transport's own clock, in order.
  ASSERT_EQ(run.device_s.size(), std::size_t(iters));
  for (int i = 0; i < iters; ++i) EXPECT_DOUBLE_EQ(run.device_s[i], 1e-3 * (i + 1));
}

// The timed buffers hold the verification pattern (the old ones were all zero), and in place
// restore() puts it back after a call overwrote it.
TEST(Harness, CaseBuffersHoldThePatternAndRestoreIt) {
  for (Dtype d : {Dtype::f32, Dtype::f64, Dtype::i32, Dtype::bf16}) {
    const std::size_t count = 257, bytes = count * size_of(d);
    std::vector<std::byte> pattern(bytes);
    fill_pattern(pattern.data(), count, d, world_rank(), world_size());
    EXPECT_NE(std::count(pattern.begin(), pattern.end(), std::byte{0}), static_cast<long>(bytes));
    CaseBuffers in_place({nullptr, d, Op::sum, true, count}, world_rank(), world_size(), world());
    EXPECT_EQ(std::memcmp(in_place.send(), pattern.data(), bytes), 0);
    std::memset(in_place.recv(), 0x7f, bytes);
    in_place.restore();
    EXPECT_EQ(std::memcmp(in_place.send(), pattern.data(), bytes), 0);
    CaseBuffers out({nullptr, d, Op::sum, false, count}, world_rank(), world_size(), world());
    EXPECT_EQ(std::memcmp(out.send(), pattern.data(), bytes), 0);
  }
}

// Every call of the timed loop (warm-up included) must see this rank's pattern as its input: the
// old loop reduced all-zero buffers, and an in-place loop without a refill would see the previous
// call's sum (growing towards overflow in i32 and infinity in bf16).
int g_calls = 0, g_calls_off_pattern = 0;
HookedWorld& input_checking_world() {
  static HookedWorld t;
  t.before = [](const void* send, void*, std::size_t count, Dtype d) {
    std::vector<std::byte> pattern(count * size_of(d));
    fill_pattern(pattern.data(), count, d, world_rank(), world_size());
    ++g_calls;
    if (std::memcmp(send, pattern.data(), pattern.size()) != 0) ++g_calls_off_pattern;
  };
  return t;
}

TEST(Harness, TimedCallsReduceThePatternNotZeros) {
  Workspace ws;
  for (Dtype d : {Dtype::i32, Dtype::bf16, Dtype::f32})
    for (bool in_place : {false, true})
      for (bool off_cache : {false, true}) {
        g_calls = g_calls_off_pattern = 0;
        TimingOptions opt;
        opt.off_cache = off_cache;
        TimedRun run =
            time_case({&kLibrary, d, Op::sum, in_place, 1000}, opt, 5, 2, MPI_COMM_WORLD, input_checking_world(), ws);
        EXPECT_EQ(g_calls, 7);
        EXPECT_EQ(g_calls_off_pattern, 0) << name(d) << (in_place ? " in place" : " out of place");
        // --off-cache evicts the call's buffers before every timed call, and only then.
        const std::uint64_t per_call = (in_place ? 1 : 2) * 1000 * size_of(d);
        EXPECT_EQ(run.evicted_bytes, off_cache ? 5 * per_call : 0);
      }
}

// A result with a block shifted by 17 elements. The old pattern, (7 rank + 3 i) mod 17 - 8,
// repeated every 17 elements, so this passed verification; the new data catches it.
HookedWorld& block_shifting_world() {
  static HookedWorld t;
  t.after = [](const void*, void* recv, std::size_t count, Dtype d) {
    const std::size_t es = size_of(d);
    if (count >= 400)
      std::memmove(static_cast<std::byte*>(recv) + 100 * es, static_cast<std::byte*>(recv) + 117 * es, 200 * es);
  };
  return t;
}

TEST(Harness, VerificationCatchesABlockShiftedBy17) {
  Workspace ws;
  for (Dtype d : {Dtype::f32, Dtype::f64, Dtype::i32, Dtype::bf16})
    for (Op o : {Op::sum, Op::max, Op::min})
      for (bool in_place : {false, true}) {
        long long wrong = verify_case({&kLibrary, d, o, in_place, 1000}, MPI_COMM_WORLD, block_shifting_world(), ws);
        // 200 shifted elements on every rank; a shifted value equals the right one by chance only
        // (max and min of many ranks coincide more often, hence the margin).
        EXPECT_GE(wrong, 100LL * world_size()) << name(d) << " " << name(o);
        EXPECT_EQ(verify_case({&kLibrary, d, o, in_place, 399}, MPI_COMM_WORLD, block_shifting_world(), ws),
                  0);  // control: no shift
      }
}

TEST(Harness, OffCacheRunsStillVerify) {
  // Evicting the buffers between calls must not disturb what the algorithms compute.
  Workspace ws;
  attach_world_segment(ws);
  TimingOptions opt;
  opt.off_cache = true;
  for (const Algorithm& alg : algorithms()) {
    CaseSpec spec{&alg, Dtype::f32, Op::sum, false, 5000};
    TimedRun run = time_case(spec, opt, 3, 1, MPI_COMM_WORLD, world_for(alg), ws);
    EXPECT_EQ(run.samples.size(), 3u) << alg.name;
    EXPECT_EQ(verify_case(spec, MPI_COMM_WORLD, world_for(alg), ws), 0) << alg.name;
  }
}

TEST(Transport, RegistryMakesAnMpiTransportThatExchangesAndReduces) {
  const TransportKind& kind = find_transport("mpi");
  EXPECT_EQ(transports().front().name, "mpi");
  try {
    find_transport("carrier-pigeon");
    ADD_FAILURE() << "an unknown transport was accepted";
  } catch (const sp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("choose mpi"), std::string::npos) << e.what();
  }
  const std::unique_ptr<Transport> t = kind.make(MPI_COMM_WORLD);
  EXPECT_EQ(t->rank(), world_rank());
  EXPECT_EQ(t->size(), world_size());
  Request none;
  t->wait(none);  // waiting on no request returns at once
  EXPECT_FALSE(none.pending());
  // A ring shift of 3 doubles, many times (the request slots are reused), then a local reduce.
  const int right = (t->rank() + 1) % t->size(), left = (t->rank() + t->size() - 1) % t->size();
  std::vector<double> out{double(t->rank()), 1.0, -2.0}, in(3, -1.0);
  for (int i = 0; i < 50; ++i) {
    Request r = t->post_recv(in.data(), in.size(), Dtype::f64, left, 7);
    Request s = t->post_send(out.data(), out.size(), Dtype::f64, right, 7);
    EXPECT_TRUE(r.pending() && s.pending());
    t->wait(s);
    t->wait(r);
    EXPECT_FALSE(r.pending() || s.pending());
  }
  EXPECT_EQ(in, (std::vector<double>{double(left), 1.0, -2.0}));
  t->reduce(in.data(), out.data(), in.size(), Dtype::f64, Op::max);
  EXPECT_EQ(in[0], double(std::max(left, t->rank())));
  // The library's allreduce through the transport: the sum of ranks.
  int mine = t->rank(), sum = -1;
  t->library_allreduce(&mine, &sum, 1, Dtype::i32, Op::sum);
  EXPECT_EQ(sum, world_size() * (world_size() - 1) / 2);
}
