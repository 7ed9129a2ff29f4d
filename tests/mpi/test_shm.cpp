// The node-local allreduces (collectives/algorithms/shm.cpp) after set-up: no MPI call inside a call — every
// communication call of the MPI library is counted through the profiling interface (PMPI) — and
// the node segment's arena and orphan clean-up. Exactness at 1-8 ranks is allreduce_algorithms'.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <vector>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/transports/node_segment.hpp"
#include "core/measure/topology.hpp"
#include "core/run/error.hpp"

namespace {
std::atomic<long> g_mpi_calls{0};
}

// The MPI library's communication calls, counted and passed on to their PMPI_ names.
extern "C" {
int MPI_Send(const void* b, int n, MPI_Datatype d, int peer, int tag, MPI_Comm c) {
  ++g_mpi_calls;
  return PMPI_Send(b, n, d, peer, tag, c);
}
int MPI_Recv(void* b, int n, MPI_Datatype d, int peer, int tag, MPI_Comm c, MPI_Status* s) {
  ++g_mpi_calls;
  return PMPI_Recv(b, n, d, peer, tag, c, s);
}
int MPI_Isend(const void* b, int n, MPI_Datatype d, int peer, int tag, MPI_Comm c, MPI_Request* r) {
  ++g_mpi_calls;
  return PMPI_Isend(b, n, d, peer, tag, c, r);
}
int MPI_Irecv(void* b, int n, MPI_Datatype d, int peer, int tag, MPI_Comm c, MPI_Request* r) {
  ++g_mpi_calls;
  return PMPI_Irecv(b, n, d, peer, tag, c, r);
}
int MPI_Sendrecv(const void* sb, int sn, MPI_Datatype sd, int dst, int st, void* rb, int rn, MPI_Datatype rd, int src,
                 int rt, MPI_Comm c, MPI_Status* s) {
  ++g_mpi_calls;
  return PMPI_Sendrecv(sb, sn, sd, dst, st, rb, rn, rd, src, rt, c, s);
}
int MPI_Wait(MPI_Request* r, MPI_Status* s) {
  ++g_mpi_calls;
  return PMPI_Wait(r, s);
}
int MPI_Test(MPI_Request* r, int* flag, MPI_Status* s) {
  ++g_mpi_calls;
  return PMPI_Test(r, flag, s);
}
int MPI_Allreduce(const void* sb, void* rb, int n, MPI_Datatype d, MPI_Op o, MPI_Comm c) {
  ++g_mpi_calls;
  return PMPI_Allreduce(sb, rb, n, d, o, c);
}
int MPI_Iallreduce(const void* sb, void* rb, int n, MPI_Datatype d, MPI_Op o, MPI_Comm c, MPI_Request* r) {
  ++g_mpi_calls;
  return PMPI_Iallreduce(sb, rb, n, d, o, c, r);
}
int MPI_Barrier(MPI_Comm c) {
  ++g_mpi_calls;
  return PMPI_Barrier(c);
}
int MPI_Bcast(void* b, int n, MPI_Datatype d, int root, MPI_Comm c) {
  ++g_mpi_calls;
  return PMPI_Bcast(b, n, d, root, c);
}
}

namespace sp::coll {
namespace {

NodeSegment& world_segment() {
  static const std::unique_ptr<NodeSegment> segment = NodeSegment::create(MPI_COMM_WORLD, 4 << 20);
  return *segment;
}

// MPI calls made by `calls` allreduces of algorithm name (f32 sum, out of place) of count elements,
// buffers in the segment's arena or private.
long mpi_calls_of(const char* name, std::size_t count, int calls) {
  static const std::unique_ptr<Transport> t = make_mpi_transport(MPI_COMM_WORLD);
  const Algorithm& a = find_algorithm(name);
  Workspace ws;
  ws.attach(&world_segment());
  const std::size_t bytes = count * sizeof(float);
  TransportBuffer send = a.buffers_in_segment ? world_segment().allocate(bytes) : t->allocate(bytes);
  TransportBuffer recv = a.buffers_in_segment ? world_segment().allocate(bytes) : t->allocate(bytes);
  const AllreduceArgs args{send.data(), recv.data(), count, Dtype::f32, Op::sum, t.get(), &ws, 64 << 10};
  a.run(args);  // the first call builds the program
  const long before = g_mpi_calls.load();
  for (int i = 0; i < calls; ++i) a.run(args);
  return g_mpi_calls.load() - before;
}

TEST(Shm, NoMpiCallInsideACall) {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  for (std::size_t count : {std::size_t(1), std::size_t(1000), std::size_t(300000)}) {
    EXPECT_EQ(mpi_calls_of("shm", count, 5), 0) << count;
    EXPECT_EQ(mpi_calls_of("shm-seg", count, 5), 0) << count;
    // The control: the counting sees a schedule's and the library's calls.
    if (p > 1) {
      EXPECT_GT(mpi_calls_of("ring", count, 5), 0) << count;
      EXPECT_GT(mpi_calls_of("mpi", count, 5), 0) << count;
    }
  }
}

TEST(Shm, ArenaBuffersSitAtTheSameOffsetOnEveryRankAndAreReused) {
  NodeSegment& seg = world_segment();
  TransportBuffer a = seg.allocate(1000), b = seg.allocate(3000);
  EXPECT_TRUE(seg.in_arena(a.data(), 1000) && seg.in_arena(b.data(), 3000));
  EXPECT_FALSE(seg.in_arena(a.data(), 8 << 20));
  std::vector<int> x(1);
  EXPECT_FALSE(seg.in_arena(x.data(), 4));
  // Every rank sees the others' copies at the same offset: write, then read every rank's.
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  *reinterpret_cast<int*>(b.data()) = 100 + rank;
  PMPI_Barrier(MPI_COMM_WORLD);
  for (int r = 0; r < p; ++r) EXPECT_EQ(*reinterpret_cast<int*>(seg.peer_address(b.data(), r)), 100 + r);
  PMPI_Barrier(MPI_COMM_WORLD);
  std::byte* where = a.data();
  a = {};
  EXPECT_EQ(seg.allocate(512).data(), where);  // the freed block is found first
  EXPECT_THROW(seg.allocate(5 << 20), Error);  // more than the 4 MiB arena: one error
}

TEST(Shm, SegmentsOfDeadCreatorsAreRemovedAndLiveOnesKept) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sp-shm-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const pid_t dead = [] {  // a child that has exited and been reaped
    const pid_t c = fork();
    if (c == 0) _exit(0);
    int status = 0;
    waitpid(c, &status, 0);
    return c;
  }();
  const std::string live = "scaleprobe-shm-h0-" + std::to_string(getpid()) + "-0";
  const std::string orphan = "scaleprobe-shm-h0-" + std::to_string(dead) + "-3";
  const std::string other_host = "scaleprobe-shm-h1-" + std::to_string(dead) + "-0";
  for (const std::string& f : {live, orphan, other_host, std::string("unrelated")}) std::ofstream(dir / f) << "x";
  EXPECT_EQ(remove_orphaned_segments(dir.string(), "h0"), std::vector<std::string>{orphan});
  for (const std::string& f : {live, other_host, std::string("unrelated")})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sp::coll

namespace sp::coll {
namespace {

// The progressed executor (what the data-parallel engine's progress mode uses) runs the node-local
// programs too: a wait on peers' signals returns instead of blocking, and the result is exact.
TEST(Shm, AdvancedInSlicesTheResultIsExact) {
  static const std::unique_ptr<Transport> t = make_mpi_transport(MPI_COMM_WORLD);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const std::size_t count = 100000;  // many chunks of 64 KiB
  for (const char* name : {"shm", "shm-seg"}) {
    const Algorithm& a = find_algorithm(name);
    TransportBuffer send = a.buffers_in_segment ? world_segment().allocate(count * 4) : t->allocate(count * 4);
    TransportBuffer recv = a.buffers_in_segment ? world_segment().allocate(count * 4) : t->allocate(count * 4);
    auto* in = reinterpret_cast<std::int32_t*>(send.data());
    for (std::size_t i = 0; i < count; ++i) in[i] = std::int32_t(i % 1000) * (rank + 1);
    const Shape shape{count, Dtype::i32, Op::sum, rank, p, 64 << 10, false, 0};
    const Program program = a.plan(shape);
    ProgressedRun run;
    run.start(program, {send.data(), recv.data(), nullptr, &world_segment()}, *t);
    long rounds = 0;
    while (!run.advance()) ++rounds;
    if (p > 1) {
      EXPECT_GT(run.events(), 0u) << name;
    }
    const auto* out = reinterpret_cast<const std::int32_t*>(recv.data());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) wrong += out[i] != std::int32_t(i % 1000) * p * (p + 1) / 2;
    EXPECT_EQ(wrong, 0u) << name << " after " << rounds << " unfinished rounds";
    PMPI_Barrier(MPI_COMM_WORLD);
  }
}

// Out of place, a result over 4x the core's private caches is gathered with non-temporal stores
// (Transport::stream_copy): the program says so, and the result is exact (an odd count, so the
// copies have unaligned heads and tails); in place and small results are copied through the cache,
// and so is every result where hwloc knows no private cache.
TEST(Shm, LargePrivateResultsAreStreamedAndExact) {
  const std::size_t cache = core_private_cache_bytes();
  static const std::unique_ptr<Transport> t = make_mpi_transport(MPI_COMM_WORLD);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const std::size_t count = (cache > 0 ? cache : std::size_t(8) << 20) + 1001;  // 4-byte elements: > 4x cache
  auto streams = [](const Program& prog) {
    return std::any_of(prog.actions.begin(), prog.actions.end(),
                       [](const Action& x) { return x.kind == ActionKind::stream_copy; });
  };
  const Shape large{count, Dtype::i32, Op::sum, rank, p, 1 << 20, false, 0};
  Shape in_place = large, small = large;
  in_place.in_place = true;
  small.count = 1000;
  EXPECT_EQ(streams(plan_shm(large)), p > 1 && cache > 0);
  EXPECT_FALSE(streams(plan_shm(in_place)));
  EXPECT_FALSE(streams(plan_shm(small)));
  TransportBuffer send = t->allocate(count * 4), recv = t->allocate(count * 4);
  auto* in = reinterpret_cast<std::int32_t*>(send.data());
  for (std::size_t i = 0; i < count; ++i) in[i] = std::int32_t(i % 1000) * (rank + 1);
  run_blocking(plan_shm(large), {send.data(), recv.data(), nullptr, &world_segment()}, *t);
  const auto* out = reinterpret_cast<const std::int32_t*>(recv.data());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) wrong += out[i] != std::int32_t(i % 1000) * p * (p + 1) / 2;
  EXPECT_EQ(wrong, 0u);
  PMPI_Barrier(MPI_COMM_WORLD);
}

// The engine's mean (Shape::scaled): shm and shm-seg scale each rank's reduced slice once, before
// the others copy it, in the blocking and the progressed executor alike.
TEST(Shm, ScaledRunsGiveTheMeanOnEveryRank) {
  static const std::unique_ptr<Transport> t = make_mpi_transport(MPI_COMM_WORLD);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const std::size_t count = 100000;
  for (const char* name : {"shm", "shm-seg"})
    for (bool progressed : {false, true}) {
      const Algorithm& a = find_algorithm(name);
      TransportBuffer send = a.buffers_in_segment ? world_segment().allocate(count * 4) : t->allocate(count * 4);
      TransportBuffer recv = a.buffers_in_segment ? world_segment().allocate(count * 4) : t->allocate(count * 4);
      auto* in = reinterpret_cast<float*>(send.data());
      for (std::size_t i = 0; i < count; ++i) in[i] = float(i % 1000) * float(rank + 1);
      Shape shape{count, Dtype::f32, Op::sum, rank, p, 64 << 10, false, 0};
      shape.scaled = true;
      const Program program = a.plan(shape);
      EXPECT_EQ(program.scales, p > 1) << name;
      Bindings bound{send.data(), recv.data(), nullptr, &world_segment()};
      bound.scale = 0.5;
      if (progressed) {
        ProgressedRun run;
        run.start(program, bound, *t);
        while (!run.advance()) {}
      } else {
        run_blocking(program, bound, *t);
      }
      const float factor = program.scales ? 0.5f : 1.0f;
      const auto* out = reinterpret_cast<const float*>(recv.data());
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < count; ++i) wrong += out[i] != float(i % 1000) * float(p * (p + 1) / 2) * factor;
      EXPECT_EQ(wrong, 0u) << name << (progressed ? " progressed" : " blocking");
      PMPI_Barrier(MPI_COMM_WORLD);
    }
}

}  // namespace
}  // namespace sp::coll
