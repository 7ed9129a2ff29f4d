// The schedules as step programs (collectives/algorithms/program.hpp), every rank in one process on a
// loopback transport that moves a message only when polled: each program gives the exact
// reduction when advanced a slice at a time, its sends and receives pair up message for message,
// and advancing them keeps moving — in lockstep rounds (every rank one advance() per round) some
// message moves in every round and the schedule ends within a bound set by its blocking points, so
// a progressed executor that posted nothing until the end, or one action per call, fails here.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/bench/harness.hpp"
#include "core/run/error.hpp"
#include "tests/lib/loopback_transport.hpp"

namespace sp::coll {
namespace {

using testing::Fabric;
using testing::LoopbackTransport;

struct Case {
  const Algorithm* algorithm;
  int nranks;
  std::size_t count;
  std::size_t chunk_bytes;
  bool in_place;
  Dtype dtype;
  Op op;
  double scale = 1.0;  // not 1: a scaled program (Shape::scaled), the result times scale
  std::string name() const {
    return fmt::format("{} p={} count={} chunk={} {} {} {} scale={}", algorithm->name, nranks, count, chunk_bytes,
                       in_place ? "in place" : "out of place", coll::name(dtype), coll::name(op), scale);
  }
};

// Blocking points of a program: where an executor may have to stop.
std::size_t blocking_points(const Program& p) {
  return std::size_t(std::count_if(p.actions.begin(), p.actions.end(), [](const Action& a) {
    return a.kind == ActionKind::wait || a.kind == ActionKind::send || a.kind == ActionKind::recv ||
           a.kind == ActionKind::sendrecv;
  }));
}

struct Outcome {
  int rounds = 0;
  int idle_rounds = 0;  // rounds in which no message was posted or completed anywhere
  std::size_t max_blocking_points = 0;
  bool scales = false;  // the program scaled the result itself (Program::scales, on every rank)
};

// Runs the case on every rank in lockstep and checks the result; returns how it went.
Outcome run_lockstep(const Case& c) {
  const std::size_t es = size_of(c.dtype), bytes = c.count * es;
  Fabric fabric;
  std::vector<std::unique_ptr<LoopbackTransport>> transports;
  std::vector<Program> programs;
  std::vector<std::vector<std::byte>> send(c.nranks), recv(c.nranks), scratch(c.nranks);
  std::vector<ProgressedRun> runs(std::size_t(c.nranks));
  Outcome out;
  for (int r = 0; r < c.nranks; ++r) {
    transports.push_back(std::make_unique<LoopbackTransport>(fabric, r, c.nranks));
    send[r].resize(bytes);
    fill_pattern(send[r].data(), c.count, c.dtype, r, c.nranks);
    recv[r] = c.in_place ? send[r] : std::vector<std::byte>(bytes);
    Shape shape{c.count, c.dtype, c.op, r, c.nranks, c.chunk_bytes, c.in_place, 0};
    shape.scaled = c.scale != 1.0;
    programs.push_back(c.algorithm->plan(shape));
    scratch[r].resize(programs[r].scratch_elements * es);
    out.max_blocking_points = std::max(out.max_blocking_points, blocking_points(programs[r]));
    EXPECT_EQ(programs[r].scales, programs[0].scales) << c.name() << ": rank " << r;
  }
  out.scales = programs[0].scales;
  for (int r = 0; r < c.nranks; ++r) {
    void* rb = c.in_place ? static_cast<void*>(recv[r].data()) : recv[r].data();
    const void* sb = c.in_place ? rb : send[r].data();
    Bindings bound{sb, rb, scratch[r].data()};
    bound.scale = c.scale;
    runs[r].start(programs[r], bound, *transports[r]);
  }
  const int max_rounds = int(out.max_blocking_points) * 2 + 4;  // far beyond the bound checked below
  for (bool all_done = false; !all_done && out.rounds < max_rounds;) {
    ++out.rounds;
    std::size_t events_before = fabric.messages_completed();
    for (const auto& run : runs) events_before += run.events();
    all_done = true;
    for (auto& run : runs) all_done &= run.advance();
    std::size_t events_after = fabric.messages_completed();
    for (const auto& run : runs) events_after += run.events();
    if (events_after == events_before && !all_done) ++out.idle_rounds;
  }
  for (int r = 0; r < c.nranks; ++r) {
    EXPECT_TRUE(runs[r].done()) << c.name() << ": rank " << r << " did not finish in " << out.rounds << " rounds";
    std::vector<std::byte> want(bytes);
    fill_expected(want.data(), c.count, c.dtype, c.op, c.nranks);
    if (out.scales) scale_local(want.data(), c.count, c.dtype, c.scale);
    const std::size_t wrong = count_mismatches(recv[r].data(), want.data(), c.count, c.dtype);
    EXPECT_EQ(wrong, 0u) << c.name() << ": rank " << r << " has " << wrong << " wrong elements";
  }
  return out;
}

std::vector<const Algorithm*> schedules() {
  std::vector<const Algorithm*> v;
  for (const Algorithm& a : algorithms())
    if (a.is_schedule()) v.push_back(&a);
  return v;
}

TEST(Programs, EveryScheduleReducesExactlyWhenAdvancedInSlices) {
  for (const Algorithm* a : schedules())
    for (int p : {1, 2, 3, 4, 5, 7, 8, 16})
      for (std::size_t count :
           {std::size_t(0), std::size_t(1), std::size_t(p + 1), std::size_t(1000), std::size_t(4099)})
        for (std::size_t chunk : {std::size_t(0), std::size_t(64), std::size_t(4096)})
          for (bool in_place : {false, true}) run_lockstep({a, p, count, chunk, in_place, Dtype::f32, Op::sum});
}

TEST(Programs, EveryDtypeAndOp) {
  for (const Algorithm* a : schedules())
    for (int p : {3, 4})
      for (Dtype d : {Dtype::f32, Dtype::f64, Dtype::i32, Dtype::bf16})
        for (Op o : {Op::sum, Op::max, Op::min}) run_lockstep({a, p, 777, 256, false, d, o});
}

// Advancing keeps moving: some message is posted or completed in every round, and the schedule
// ends within its blocking points + 2 rounds (each blocking point waits at most for a post its
// peer makes in the same round or the next).
TEST(Programs, EveryProgressCallMovesTheScheduleOn) {
  for (const Algorithm* a : schedules())
    for (int p : {2, 3, 5, 8, 16})
      for (std::size_t chunk : {std::size_t(64), std::size_t(1) << 20}) {
        const Case c{a, p, 3000, chunk, false, Dtype::f32, Op::sum};
        const Outcome o = run_lockstep(c);
        EXPECT_EQ(o.idle_rounds, 0) << c.name();
        EXPECT_LE(std::size_t(o.rounds), o.max_blocking_points + 2)
            << c.name() << ": " << o.rounds << " rounds for " << o.max_blocking_points << " blocking points";
      }
}

// The sizes of the messages from one rank to another, (from, to), in program order.
using MessageSizes = std::map<std::pair<int, int>, std::vector<std::size_t>>;
// Adds rank r's program's sends to sent and its receives to received.
void add_messages(int r, const Program& prog, MessageSizes& sent, MessageSizes& received) {
  for (const Action& x : prog.actions) {
    if (x.kind == ActionKind::post_send || x.kind == ActionKind::send || x.kind == ActionKind::sendrecv)
      sent[{r, x.peer}].push_back(x.a.count);
    if (x.kind == ActionKind::post_recv || x.kind == ActionKind::recv) received[{x.peer, r}].push_back(x.a.count);
    if (x.kind == ActionKind::sendrecv) received[{x.source(), r}].push_back(x.b.count);
  }
}

// Every send has a receive of the same size at the same position on its channel, on every rank
// pair (the loopback also refuses a size mismatch; this says it of the programs alone).
TEST(Programs, SendsAndReceivesPairUp) {
  for (const Algorithm* a : schedules())
    for (int p : {2, 3, 6, 9})
      for (std::size_t count : {std::size_t(1), std::size_t(1234)}) {
        MessageSizes sent, received;
        for (int r = 0; r < p; ++r)
          add_messages(r, a->plan(Shape{count, Dtype::f32, Op::sum, r, p, 512, false, 0}), sent, received);
        EXPECT_EQ(sent, received) << a->name << " at " << p << " ranks, " << count << " elements";
      }
}

// The other collectives' schedules (collective.hpp): every send pairs with a receive of its size,
// on every root, and the scratch they ask for is within the workspace they declare. (Their results
// are checked through MPI and Gloo by tests/mpi/test_collectives.cpp.)
TEST(Programs, OtherCollectivesPairUpWithinTheirWorkspace) {
  int programs = 0;
  for (Collective c : {Collective::reduce_scatter, Collective::all_gather, Collective::broadcast, Collective::reduce,
                       Collective::all_to_all, Collective::all_to_allv})
    for (const Algorithm& a : algorithms(c)) {
      if (!a.is_schedule()) continue;
      for (int p : {1, 2, 3, 6, 9})
        for (int root : {0, p - 1})
          for (std::size_t count : {std::size_t(p), std::size_t(1234 * p)})
            for (std::size_t chunk : {std::size_t(512), std::size_t(1) << 20}) {
              MessageSizes sent, received;
              for (int r = 0; r < p; ++r) {
                Shape s{count, Dtype::f32, Op::sum, r, p, chunk, false, 0};
                s.collective = c;
                s.root = root;
                s.imbalance = c == Collective::all_to_allv ? 0.7 : 0;
                const Program prog = a.plan(s);
                ++programs;
                EXPECT_LE(prog.scratch_elements * 4, a.workspace_bytes(count * 4, chunk)) << a.name << " rank " << r;
                add_messages(r, prog, sent, received);
              }
              EXPECT_EQ(sent, received) << info(c).name << " " << a.name << " at " << p << " ranks, root " << root
                                        << ", " << count << " elements";
            }
    }
  EXPECT_GT(programs, 500);
}

// The program of a shape is built once and reused (the timed loop never rebuilds it).
TEST(Programs, WorkspaceKeepsTheProgramOfTheLastShape) {
  Workspace ws;
  const Shape s{1000, Dtype::f32, Op::sum, 1, 4, 256, false, 0};
  const Program* first = &ws.program(plan_ring, s);
  const std::size_t actions = first->actions.size();
  EXPECT_EQ(&ws.program(plan_ring, s), first);
  EXPECT_EQ(ws.program(plan_ring, s).actions.size(), actions);
  Shape other = s;
  other.count = 10;
  EXPECT_NE(ws.program(plan_ring, other).actions.size(), actions);
}

// The workspace an algorithm declares (Algorithm::workspace_bytes, which the harness's memory
// check adds to each case) covers the scratch its program asks for, on every rank of every shape.
TEST(Programs, DeclaredWorkspaceCoversEveryProgramsScratch) {
  int shapes = 0;
  for (const Algorithm& a : algorithms())
    for (int nranks : {1, 2, 3, 5, 8})
      for (int local_ranks : {1, 3})
        for (std::size_t count : {1, 7, 1000, 20000})
          for (std::size_t chunk : {256, 4096, 1 << 20})
            for (Dtype d : {Dtype::f32, Dtype::bf16, Dtype::f64})
              for (bool in_place : {false, true})
                for (int rank = 0; rank < nranks; ++rank) {
                  Shape s{count, d, Op::sum, rank, nranks, chunk, in_place, 0, local_ranks > 1 ? 1 : 0, local_ranks};
                  const std::uint64_t scratch = a.plan(s).scratch_elements * size_of(d);
                  ASSERT_LE(scratch, a.workspace_bytes(count * size_of(d), chunk))
                      << a.name << ": rank " << rank << " of " << nranks << ", " << local_ranks << " local, " << count
                      << " x " << name(d) << ", chunk " << chunk << (in_place ? ", in place" : "");
                  ++shapes;
                }
  EXPECT_GT(shapes, 1000);
}

// The halving reduce-scatter's scratch: the partial sums span only the half a rank keeps in its
// first step (the whole message after a fold) and the received half follows them, so no rank
// needs more than the message on a power of two (half of it at 2 ranks), or 5/3 of it otherwise
// (a fold, then a first half of at most 2/3 of the message at 3 ranks); it was 1.5-2 messages.
TEST(Programs, HalvingReduceScatterScratchIsAtMostTheMessage) {
  for (int p : {2, 3, 4, 5, 6, 7, 8}) {
    const std::size_t n = 1200 * static_cast<std::size_t>(p);
    for (int rank = 0; rank < p; ++rank) {
      Shape s{n, Dtype::f32, Op::sum, rank, p, 1 << 20, false, 0};
      s.collective = Collective::reduce_scatter;
      const std::size_t scratch = plan_halving_reduce_scatter(s).scratch_elements;
      if ((p & (p - 1)) == 0)
        EXPECT_LE(scratch, p == 2 ? n / 2 : n) << "rank " << rank << " of " << p;
      else
        EXPECT_LE(3 * scratch, 5 * n) << "rank " << rank << " of " << p;
    }
  }
}

// A tag offset moves every message of a program to its own tags.
TEST(Programs, TagOffsetSeparatesPrograms) {
  const Program a = plan_ring(Shape{100, Dtype::f32, Op::sum, 0, 4, 0, false, 0});
  const Program b = plan_ring(Shape{100, Dtype::f32, Op::sum, 0, 4, 0, false, tag::kTagStride});
  EXPECT_EQ(b.tag, a.tag + tag::kTagStride);
}

// append (hier's rail step): a schedule built for a slice runs on exactly that slice of the
// buffer, its steps and requests kept, the rest of the buffer untouched.
TEST(Programs, AppendedScheduleReducesOnlyItsSlice) {
  const std::size_t count = 50, at = 13, len = 21;
  for (PlanFn plan : {plan_ring, plan_rabenseifner})
    for (int p : {2, 3, 4}) {
      Fabric fabric;
      std::vector<std::unique_ptr<LoopbackTransport>> transports;
      std::vector<Program> programs;
      const auto P = static_cast<std::size_t>(p);
      std::vector<std::vector<float>> buf(P, std::vector<float>(count)), scratch(P);
      std::vector<ProgressedRun> runs(P);
      for (int r = 0; r < p; ++r) {
        transports.push_back(std::make_unique<LoopbackTransport>(fabric, r, p));
        fill_pattern(buf[r].data(), count, Dtype::f32, r, p);
        ProgramBuilder b(Shape{count, Dtype::f32, Op::sum, r, p, 16, true, 0}, 0x7700);
        b.append(plan(Shape{len, Dtype::f32, Op::sum, r, p, 16, true, 0}), at);
        programs.push_back(b.finish());
        EXPECT_EQ(programs[r].tag, 0x7700);
        EXPECT_GT(programs[r].steps.size(), 1u);
        scratch[r].resize(programs[r].scratch_elements);
      }
      for (int r = 0; r < p; ++r)
        runs[r].start(programs[r],
                      Bindings{buf[r].data(), buf[r].data(), reinterpret_cast<std::byte*>(scratch[r].data())},
                      *transports[r]);
      for (int round = 0; round < 1000 && !std::all_of(runs.begin(), runs.end(), [](auto& x) { return x.done(); });
           ++round)
        for (auto& run : runs) run.advance();
      std::vector<float> want(count), own(count);
      fill_expected(want.data(), count, Dtype::f32, Op::sum, p);
      for (int r = 0; r < p; ++r) {
        ASSERT_TRUE(runs[r].done()) << "p=" << p << " rank " << r;
        fill_pattern(own.data(), count, Dtype::f32, r, p);
        for (std::size_t i = 0; i < count; ++i)
          EXPECT_EQ(buf[r][i], i >= at && i < at + len ? want[i] : own[i])
              << "p=" << p << " rank " << r << " element " << i;
      }
    }
}

// The data-parallel engine's mean: a scaled program multiplies each element once, where its final
// value is made (ring's last reduce-scatter step, Rabenseifner's last halving, doubling's last
// exchange); the others leave
// the scale to the caller (Program::scales false) and must not apply it at all. Every rank agrees.
TEST(Programs, ScaledSchedulesScaleEveryElementOnce) {
  for (const Algorithm* a : schedules())
    for (int p = 1; p <= 5; ++p)
      for (std::size_t count : {std::size_t(1), std::size_t(7), std::size_t(50)})
        for (Dtype d : {Dtype::f32, Dtype::f64, Dtype::bf16}) {
          // 0.25: exact on the pattern's small integers.
          const Case c{a, p, count, 16, false, d, Op::sum, 0.25};
          const bool own_final_step = a->name == "ring" || a->name == "rabenseifner" || a->name == "doubling";
          EXPECT_EQ(run_lockstep(c).scales, own_final_step && p > 1) << c.name();
        }
}

// shm-seg moves each byte of the message once each way: every rank works on its own slice of every
// chunk in every rank's buffers (send and receive), no other element, and writes that slice into
// every rank's receive buffer itself — no rank reads a slice another rank reduced (no gather),
// which is what keeps its memory traffic at one read and one write per byte in place. One signal
// per chunk and one at the end.
TEST(Programs, ShmInSegmentTouchesOnlyItsOwnSliceOfEveryBuffer) {
  const std::size_t chunk = (std::size_t(1) << 20) / sizeof(float);
  for (int p : {2, 3, 5})
    for (bool in_place : {true, false})
      for (std::size_t count : {std::size_t(1), std::size_t(1000), 3 * chunk + 7}) {
        std::vector<int> owner(count, -1);                                                  // who touched element e
        std::vector<std::vector<int>> writer(std::size_t(p), std::vector<int>(count, -1));  // [buffer][e]
        for (int r = 0; r < p; ++r) {
          Shape s{count, Dtype::f32, Op::sum, r, p, 1 << 20, in_place, 0};
          s.local_rank = r;
          s.local_ranks = p;
          const Program prog = plan_shm_in_segment(s);
          EXPECT_EQ(prog.signals, int((count + chunk - 1) / chunk) + 1) << p << " " << count;
          for (const Action& x : prog.actions) {
            if (x.kind != ActionKind::reduce && x.kind != ActionKind::reduce_into && x.kind != ActionKind::copy)
              continue;
            for (const Span* span : {&x.a, &x.b, &x.c})
              for (std::size_t e = span->offset; e < span->offset + span->count; ++e) {
                if (owner[e] < 0) owner[e] = r;
                ASSERT_EQ(owner[e], r) << "p=" << p << " count=" << count << " element " << e;
              }
            if (x.a.buffer == Buffer::recv)
              for (std::size_t e = x.a.offset; e < x.a.offset + x.a.count; ++e)
                writer[std::size_t(x.a.owner < 0 ? r : x.a.owner)][e] = r;
          }
        }
        for (int q = 0; q < p; ++q)
          for (std::size_t e = 0; e < count; ++e)
            ASSERT_EQ(writer[std::size_t(q)][e], owner[e])
                << "p=" << p << " count=" << count << " buffer " << q << " element " << e;
      }
}

// The non-temporal copy (shm's large private results) is memcpy's equal at every alignment of
// either end and every length around its 64-byte body, and writes nothing outside the destination.
TEST(Programs, StreamCopyEqualsMemcpyAtEveryAlignment) {
  Fabric fabric;
  const LoopbackTransport t(fabric, 0, 1);
  std::vector<unsigned char> src(1024), want(1100), got(1100);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  for (std::size_t to : {0, 1, 15, 16, 63})
    for (std::size_t from : {0, 5, 16})
      for (std::size_t bytes : {0, 1, 63, 64, 65, 127, 200, 1000}) {
        std::fill(want.begin(), want.end(), 0xAB);
        std::fill(got.begin(), got.end(), 0xAB);
        std::copy_n(src.begin() + long(from), bytes, want.begin() + long(to));
        t.stream_copy(got.data() + to, src.data() + from, bytes);
        ASSERT_EQ(got, want) << "to +" << to << ", from +" << from << ", " << bytes << " bytes";
      }
}

TEST(Programs, OnlyFloatingPointResultsScale) {
  Shape s{8, Dtype::i32, Op::sum, 0, 2, 16, false, 0};
  s.scaled = true;
  EXPECT_THROW(plan_ring(s), Error);
  std::vector<std::int32_t> v(4, 3);
  EXPECT_THROW(scale_local(v.data(), v.size(), Dtype::i32, 0.5), Error);
}

}  // namespace
}  // namespace sp::coll
