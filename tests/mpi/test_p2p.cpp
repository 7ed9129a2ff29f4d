// p2p_perf's cases (collectives/bench/p2p_bench.hpp) at an even rank count (CTest: 2 and 4; p2p_perf
// refuses odd ones, tests/unit/cli_errors.sh), on the transport SP_TRANSPORT names (mpi, or gloo
// where built): every test delivers the sender's pattern into every slot of the window through
// the timed loop and verification (one shared slot as OSU's, or distinct ones), and a corrupted
// element is counted where it lands.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sched.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectives/bench/p2p_bench.hpp"
#include "collectives/transports/forwarding_transport.hpp"
#include "core/run/error.hpp"
#include "tests/lib/transport_under_test.hpp"

using namespace sp::coll;

namespace {

using sp::test::transport_name;
using sp::test::world_transport;

long long summed(long long local) {
  MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return local;
}

// The world's transport, with the first element of every completed receive of 16 elements or more
// incremented on the last rank: a wrong byte on the wire.
class CorruptingWorld : public ForwardingTransport {
 public:
  CorruptingWorld() : ForwardingTransport(world_transport()) {}
  std::string_view name() const override { return "corrupting"; }
  Request post_recv(void* d, std::size_t n, Dtype t, int peer, int tag) override {
    Request r = inner().post_recv(d, n, t, peer, tag);
    if (n >= 16 && rank() == size() - 1) pending_[r.slot] = static_cast<std::int32_t*>(d);
    return r;
  }
  void wait(Request& r) override {
    const int slot = r.slot;
    inner().wait(r);
    if (auto it = pending_.find(slot); it != pending_.end()) {
      ++*it->second;
      pending_.erase(it);
    }
  }
  // Every receive completes through post_recv and wait above (Transport's own forms of the calls
  // that complete one, not the library's), so the blocking ones are corrupted as well.
  void recv(void* d, std::size_t n, Dtype t, int peer, int tag) override { Transport::recv(d, n, t, peer, tag); }
  void sendrecv(const void* out, std::size_t out_n, void* in, std::size_t in_n, Dtype t, int dest, int source,
                int tag) override {
    Transport::sendrecv(out, out_n, in, in_n, t, dest, source, tag);
  }
  bool test(Request& r) override { return Transport::test(r); }
  std::size_t wait_any(std::span<Request* const> requests) override { return Transport::wait_any(requests); }

 private:
  std::map<int, std::int32_t*> pending_;
};

class P2p : public ::testing::Test {
 protected:
  void SetUp() override { sp::test::skip_unless_transport_built(); }
};

TEST_F(P2p, EveryTestDeliversTheSendersPatternIntoEverySlot) {
  for (P2pTest test : {P2pTest::latency, P2pTest::bw, P2pTest::bibw})
    for (std::size_t bytes : {4, 4096, 262144})
      for (int window : {1, 3})
        for (bool distinct : {false, true}) {
          P2pCase c(test, bytes, window, distinct, world_transport());
          TimedRun run = time_calls(c, {3, 1, false, true}, MPI_COMM_WORLD);
          EXPECT_EQ(run.samples.size(), 3u);
          EXPECT_GT(run.evicted_bytes, 0u);  // --off-cache evicted the send buffer and the slots
          EXPECT_EQ(summed(c.verify()), 0)
              << name(test) << " " << bytes << " B, window " << window << (distinct ? ", distinct slots" : "");
        }
}

TEST_F(P2p, AWrongElementIsCountedWhereItLands) {
  CorruptingWorld corrupting;
  // latency: both sides receive once, the last rank (a receiver) corrupts one element: 1 wrong.
  P2pCase latency(P2pTest::latency, 256, 1, false, corrupting);
  EXPECT_EQ(summed(latency.verify()), 1);
  // bibw with a window of 3 in distinct slots: the last rank corrupts each of its 3 slots.
  P2pCase bibw(P2pTest::bibw, 256, 3, true, corrupting);
  EXPECT_EQ(summed(bibw.verify()), 3);
  // In one shared slot the three corruptions land on the same element: 1 wrong (3 added to it).
  P2pCase shared(P2pTest::bibw, 256, 3, false, corrupting);
  EXPECT_EQ(summed(shared.verify()), 1);
}

// --pairs each at any rank count (CTest: 2 and 4, and at 3 these tests alone): in every pair's
// case only its two ranks take part; they deliver the pattern, the statistics are theirs alone
// (the others' empty calls left out), and a receive corrupted on the last rank is counted in the
// pairs it belongs to, nowhere else.
TEST_F(P2p, EachPairAloneDeliversAndOnlyItsRanksCount) {
  const int p = world_transport().size(), rank = world_transport().rank();
  CorruptingWorld corrupting;
  for (int a = 0; a < p; ++a)
    for (int b = a + 1; b < p; ++b)
      for (P2pTest test : {P2pTest::latency, P2pTest::bw, P2pTest::bibw}) {
        const std::string what = std::string(name(test)) + " pair " + std::to_string(a) + "-" + std::to_string(b);
        P2pCase c(test, 4096, 3, true, world_transport(), a, b);
        EXPECT_EQ(c.takes_part(), rank == a || rank == b) << what;
        const TimedRun run = time_calls(c, {3, 1, true, false}, MPI_COMM_WORLD);
        const CaseStats st = case_stats(run, MPI_COMM_WORLD, c.takes_part());
        double mine = 0;
        for (const auto& sample : run.samples) mine += sample.wall_s / double(run.samples.size());
        std::vector<double> means(static_cast<std::size_t>(p));
        MPI_Allgather(&mine, 1, MPI_DOUBLE, means.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
        EXPECT_DOUBLE_EQ(st.mean.mean, (means[std::size_t(a)] + means[std::size_t(b)]) / 2) << what;
        EXPECT_EQ(summed(c.verify()), 0) << what;
        // The last rank receives in latency and bibw (and in bw when it is b): 1 slot or 3 corrupted.
        P2pCase bad(test, 256, 3, true, corrupting, a, b);
        const long long expected = b != p - 1 ? 0 : test == P2pTest::latency ? 1 : 3;
        EXPECT_EQ(summed(bad.verify()), expected) << what << " with the last rank corrupting";
      }
}

TEST(P2pTests, NamesRoundTripAndUnknownIsAnError) {
  for (P2pTest t : {P2pTest::latency, P2pTest::bw, P2pTest::bibw}) EXPECT_EQ(parse_p2p_test(name(t)), t);
  EXPECT_THROW(parse_p2p_test("osu"), sp::Error);
}

}  // namespace

// Gloo's event loop runs at idle priority (SCALEPROBE_GLOO_LOOP's default; gloo_transport.cpp says
// why): after the world's transport is made, a thread of this process has SCHED_IDLE under Gloo
// and none under MPI.
TEST_F(P2p, GlooEventLoopRunsAtIdlePriority) {
  world_transport();
  int idle = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task"))
    if (sched_getscheduler(std::stoi(task.path().filename().string())) == SCHED_IDLE) ++idle;
  if (transport_name() == "gloo")
    EXPECT_GE(idle, 1);
  else
    EXPECT_EQ(idle, 0);
}
