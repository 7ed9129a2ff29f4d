// Every registered allreduce algorithm against an exactly known answer, at whatever rank count
// mpiexec started (CTest runs 1, 2, 3, 4, 5 and 8), on the transport SP_TRANSPORT names (default
// mpi; CTest runs gloo too): the schedules on it (on Gloo with the sum only, see below) and its
// library's own allreduce. Inputs are the harness's verification pattern
// (collectives/bench/harness.hpp): pseudo-random small integers from (rank, index) with no short period
// across elements or ranks, ranged per dtype and rank count so every partial sum is exact (the
// derivation is in harness.cpp). Every rank computes the expected reduction itself; results must
// match exactly.
#include <gtest/gtest.h>
#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <tuple>
#include <string>
#include <vector>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/bf16.hpp"
#include "collectives/bench/harness.hpp"
#include "collectives/transports/node_segment.hpp"
#include "tests/lib/transport_under_test.hpp"
#ifdef SCALEPROBE_HAVE_NCCL
#include "collectives/transports/gpu/device.hpp"
#include "collectives/transports/gpu/reduce.hpp"
#include "core/run/program.hpp"
#endif

namespace sp::coll {
namespace {

constexpr Dtype kDtypes[] = {Dtype::f32, Dtype::f64, Dtype::i32, Dtype::bf16};
constexpr Op kOps[] = {Op::sum, Op::max, Op::min};

long input_value(int rank, std::size_t i, Dtype d, int nranks) {
  return static_cast<long>(pattern_value(rank, i, d, nranks));
}

// The expected reduction of elements [0, count), computed once per (dtype, op) and rank count and
// reused by every algorithm and case (each element costs a pass over all ranks).
const std::vector<long>& expected_prefix(int nranks, std::size_t count, Dtype d, Op op) {
  static std::map<std::tuple<int, Dtype, Op>, std::vector<long>> cache;
  std::vector<long>& v = cache[{nranks, d, op}];
  for (std::size_t i = v.size(); i < count; ++i)
    v.push_back(static_cast<long>(sp::coll::expected_value(i, d, op, nranks)));
  return v;
}

template <typename T>
void put(std::byte* at, T x) {
  std::memcpy(at, &x, sizeof x);
}
template <typename T>
T get(const std::byte* at) {
  T x;
  std::memcpy(&x, at, sizeof x);
  return x;
}

void store(std::byte* buf, std::size_t i, Dtype d, long v) {
  std::byte* at = buf + i * size_of(d);
  switch (d) {
    case Dtype::f32:
      return put(at, static_cast<float>(v));
    case Dtype::f64:
      return put(at, static_cast<double>(v));
    case Dtype::i32:
      return put(at, static_cast<std::int32_t>(v));
    case Dtype::bf16:
      return put(at, float_to_bf16(static_cast<float>(v)));
  }
}

// Every value in this test is an integer that every dtype holds exactly, and so does a double.
double load(const std::byte* buf, std::size_t i, Dtype d) {
  const std::byte* at = buf + i * size_of(d);
  switch (d) {
    case Dtype::f32:
      return get<float>(at);
    case Dtype::f64:
      return get<double>(at);
    case Dtype::i32:
      return get<std::int32_t>(at);
    case Dtype::bf16:
      return bf16_to_float(get<std::uint16_t>(at));
  }
  return 0;
}

// The algorithms' data on MPI_COMM_WORLD's ranks.
using test::transport_built;
using test::transport_name;
using test::world_transport;

// The algorithms this transport runs: every schedule and its library's own allreduce, and with
// MPI the node-local ones (which move no data through any transport: once is enough).
std::vector<Algorithm> algorithms_on_transport() {
  std::vector<Algorithm> v;
  for (const Algorithm& a : algorithms())
    if (a.runs_on(transport_name()) && (!a.node_local || transport_name() == "mpi")) v.push_back(a);
  return v;
}

// The node's shared segment of MPI_COMM_WORLD (made on first use: collective).
NodeSegment* world_segment() {
  // arena: the largest case's two buffers (300000 f64)
  static const std::unique_ptr<NodeSegment> segment = NodeSegment::create(MPI_COMM_WORLD, 2 * (300000 * 8 + 64));
  return segment.get();
}

// hier's ranks as nodes (node keys): one node; every rank its own node; with an even count of 4
// or more, 2 nodes interleaved (key rank % 2), so a rail's ranks are not neighbours. Each with its
// own segment and rail (made on first use: collective).
struct NodeSplit {
  int nodes = 1;
  std::unique_ptr<NodeSegment> segment;
  MPI_Comm rail_comm = MPI_COMM_NULL;  // never freed: the process ends with the test
  std::unique_ptr<Transport> rail;
};
std::vector<NodeSplit>& hier_splits() {
  static std::vector<NodeSplit> splits = [] {
    int rank = 0, p = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    std::vector<int> node_counts{1};
    if (p > 1) node_counts.push_back(p);
    if (p % 2 == 0 && p >= 4) node_counts.push_back(2);
    const char* key = std::getenv("SCALEPROBE_NODE_KEY");
    const std::string saved = key ? key : "";
    std::vector<NodeSplit> v;
    for (int nodes : node_counts) {
      setenv("SCALEPROBE_NODE_KEY", std::to_string(rank % nodes).c_str(), 1);
      NodeSplit split;
      split.nodes = nodes;
      split.segment = NodeSegment::create(MPI_COMM_WORLD, 2 * (300000 * 8 + 64), &split.rail_comm);
      split.rail = make_mpi_transport(split.rail_comm);
      v.push_back(std::move(split));
    }
    if (key)
      setenv("SCALEPROBE_NODE_KEY", saved.c_str(), 1);
    else
      unsetenv("SCALEPROBE_NODE_KEY");
    return v;
  }();
  return splits;
}

struct Case {
  Dtype dtype;
  Op op;
  std::size_t count;
  std::size_t chunk_bytes;
  bool in_place;
};

// Runs one allreduce on every rank and checks this rank's result and send buffer.
void run_case(const Algorithm& algo, const Case& c, Workspace& workspace, int rank, int p,
              const std::string& where = "") {
  const std::size_t bytes = c.count * size_of(c.dtype);
  std::vector<std::byte> input(bytes), output(bytes, std::byte{0xA5});  // 0xA5: never a result
  for (std::size_t i = 0; i < c.count; ++i) store(input.data(), i, c.dtype, input_value(rank, i, c.dtype, p));
  const std::vector<std::byte> original = input;
  std::byte* result = c.in_place ? input.data() : output.data();

  Transport& t = world_transport();
  if (algo.buffers_in_segment) {  // through buffers in the node segment's arena, copied in and back
    TransportBuffer in = workspace.segment()->allocate(bytes), out = workspace.segment()->allocate(bytes);
    std::copy(input.begin(), input.end(), in.data());  // (no memcpy: an empty vector's data() may be null)
    std::copy(output.begin(), output.end(), out.data());
    algo.run(AllreduceArgs{in.data(), c.in_place ? in.data() : out.data(), c.count, c.dtype, c.op, &t, &workspace,
                           c.chunk_bytes});
    std::copy(in.data(), in.data() + bytes, input.begin());
    std::copy(out.data(), out.data() + bytes, output.begin());
  } else if (!t.on_device()) {
    algo.run(AllreduceArgs{input.data(), result, c.count, c.dtype, c.op, &t, &workspace, c.chunk_bytes});
  } else {  // through device buffers: input and output copied there, run, and copied back
    TransportBuffer in = t.allocate(bytes), out = t.allocate(bytes);
    t.from_host(in.data(), input.data(), bytes);
    t.from_host(out.data(), output.data(), bytes);
    algo.run(AllreduceArgs{in.data(), c.in_place ? in.data() : out.data(), c.count, c.dtype, c.op, &t, &workspace,
                           c.chunk_bytes});
    t.synchronize();
    t.to_host(input.data(), in.data(), bytes);
    t.to_host(output.data(), out.data(), bytes);
  }

  const std::string what =
      fmt::format("{} dtype={} op={} count={} chunk_bytes={} {} ranks={} rank={}{}", algo.name, name(c.dtype),
                  name(c.op), c.count, c.chunk_bytes, c.in_place ? "in-place" : "out-of-place", p, rank, where);
  const std::vector<long>& want = expected_prefix(p, c.count, c.dtype, c.op);
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < c.count; ++i)
    if (load(result, i, c.dtype) != static_cast<double>(want[i]) && wrong++ == 0) first = i;
  // Failures on any rank are printed with the rank by mpi_gtest_main.cpp.
  if (wrong)
    ADD_FAILURE() << fmt::format("{}: {} wrong elements, first at index {}: got {}, expected {}", what, wrong, first,
                                 load(result, first, c.dtype), want[first]);
  if (!c.in_place && input != original) ADD_FAILURE() << what << ": the send buffer was modified";
}

class AllreduceAlgorithms : public ::testing::TestWithParam<Algorithm> {};

#ifdef SCALEPROBE_HAVE_NCCL
// Why this job cannot run NCCL with one GPU per rank ("" when it can), the same on every rank: a
// rank without a device of its own (fewer GPUs than ranks on its node), or two ranks whose device
// is the same GPU (compared by UUID: a device count cannot tell). A CUDA error other than "no
// device" is not a reason to skip: device_count throws it and the test fails with its message.
std::string gpus_per_rank_problem() {
  static const std::string problem = [] {
    std::string local;
    std::vector<std::string> uuids;
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::string mine(40, ' ');
    try {
      mine = gpu::device_uuid(gpu::select_device(gpu::local_rank(gpu::launcher_environment()), gpu::device_count()));
      mine.resize(40, ' ');
    } catch (const Error& e) {
      local = e.what();
    }
    std::vector<char> all(static_cast<std::size_t>(size) * 40);
    MPI_Allgather(mine.data(), 40, MPI_CHAR, all.data(), 40, MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r) uuids.emplace_back(all.data() + static_cast<std::ptrdiff_t>(r) * 40, 40);
    if (local.empty() && mine != std::string(40, ' ')) local = gpu::shared_device_problem(uuids, rank);
    try {
      fail_together(MPI_COMM_WORLD, local);
    } catch (const CollectiveError& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  return problem;
}
#endif

// A transport this build lacks (Gloo not found at configure time) shows as Not Run, not Passed.
// NCCL needs a GPU per rank as well: where none is visible, or ranks would share one, its tests
// show as Not Run (optional part gpu) naming why.
void skip_unless_built() {
  if (!transport_built())
    SP_SKIP_OPTIONAL_PART(transport_name(),
                          "this build has no " + transport_name() + " transport (configure found no library)");
#ifdef SCALEPROBE_HAVE_NCCL
  else if (!find_transport(transport_name()).host_memory && gpu::device_count() == 0)
    SP_SKIP_OPTIONAL_PART("gpu", "no CUDA device visible to this rank");
  else if (!find_transport(transport_name()).host_memory && !gpus_per_rank_problem().empty())
    SP_SKIP_OPTIONAL_PART("gpu", gpus_per_rank_problem());
#endif
}

TEST_P(AllreduceAlgorithms, ExactForEveryDtypeOpCountAndPlacement) {
  skip_unless_built();
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFailure()) return;
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const std::size_t P = static_cast<std::size_t>(p);
  // Empty, fewer elements than ranks (empty blocks), around p (uneven blocks), odd sizes, large.
  const std::size_t counts[] = {0, 1, P - 1, P, P + 1, 7, 1000, 4099, 300000};
  // hier: the cases below on every node split, each with its own workspace.
  std::vector<std::pair<Workspace, std::string>> workspaces(GetParam().across_nodes ? hier_splits().size() : 1);
  for (std::size_t k = 0; k < workspaces.size(); ++k) {
    if (GetParam().across_nodes) {
      const NodeSplit& split = hier_splits()[k];
      workspaces[k].first.attach(split.segment.get(), split.rail.get());
      workspaces[k].second = fmt::format(" ({} nodes)", split.nodes);
    } else if (GetParam().node_local) {
      workspaces[k].first.attach(world_segment());
    }
  }
  // A schedule on a host transport other than MPI runs the same host reduction as on MPI, where
  // every op is checked; what the transport adds is moving bytes, which every dtype, count, chunk
  // and placement still exercise — with one op (Gloo's calls over TCP made three a CI cost). A
  // library's own allreduce, and the device path's reduction kernels, keep every op.
  const bool one_op =
      GetParam().transport.empty() && transport_name() != "mpi" && find_transport(transport_name()).host_memory;
  const std::span<const Op> ops = one_op ? std::span<const Op>(kOps, 1) : std::span<const Op>(kOps);

  // Every rank walks the same cases in the same order (results never change the control flow), so
  // a failure on one rank cannot leave the others waiting in a collective.
  for (Dtype dtype : kDtypes)
    for (Op op : ops)
      for (std::size_t count : counts) {
        // 64-byte segments exercise the pipelining paths. At the large count they would only add
        // thousands of tiny messages per call, which oversubscribed ranks pay for in context
        // switches; 4 KiB still cuts that buffer into many segments.
        const std::size_t small_chunk = count > 10000 ? 4096 : 64;
        for (std::size_t chunk : {small_chunk, AllreduceArgs{}.chunk_bytes})
          for (bool in_place : {true, false})
            for (auto& [workspace, where] : workspaces)  // shared by all calls, as in the timed loop
              run_case(GetParam(), Case{dtype, op, count, chunk, in_place}, workspace, rank, p, where);
      }
}

INSTANTIATE_TEST_SUITE_P(All, AllreduceAlgorithms, ::testing::ValuesIn(algorithms_on_transport()),
                         [](const auto& info) {  // "shm-seg" -> "shm_seg": gtest names are identifiers
                           std::string n(info.param.name);
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(AllreduceTransport, IsBuilt) {
  skip_unless_built();
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFailure()) return;
  EXPECT_EQ(world_transport().name(), transport_name());
}

#ifdef SCALEPROBE_HAVE_NCCL
// Where no rank sees a GPU (CI), making the NCCL transport is one error, the same on every rank (no
// rank left waiting in NCCL's set-up), naming the lowest rank and what is missing.
TEST(NcclTransport, WithoutDeviceIsOneErrorOnEveryRank) {
  // A GPU is visible: there is nothing to refuse, and the gpu-labelled tests run NCCL instead. Not
  // Run, never Passed without testing.
  if (gpu::device_count() > 0)
    SP_SKIP_OPTIONAL_PART("no-gpu", "a CUDA device is visible: this test needs a machine without one");
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFailure()) return;
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  try {
    make_nccl_transport(MPI_COMM_WORLD);
    ADD_FAILURE() << "made an NCCL transport without a device";
  } catch (const CollectiveError& e) {
    EXPECT_EQ(std::string(e.what()),
              std::string(p > 1 ? "rank 0: " : "") +
                  "no CUDA device visible to this rank (CUDA_VISIBLE_DEVICES, the job's --gpus)");
  }
}
#endif

}  // namespace
}  // namespace sp::coll
