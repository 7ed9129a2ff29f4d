// The GPU transport's device kernels (collectives/transports/gpu/reduce.cu) against the host's reduce_local,
// for every dtype and op, and the device count of wrong elements against planted differences.
// Needs a CUDA device: without one each test is Not Run (optional part gpu).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collectives/datatypes.hpp"
#include "collectives/transports/gpu/reduce.hpp"
#include "collectives/bench/harness.hpp"
#include "tests/lib/optional_part.hpp"

namespace sp::coll::gpu {
namespace {

constexpr Dtype kDtypes[] = {Dtype::f32, Dtype::f64, Dtype::i32, Dtype::bf16};
constexpr Op kOps[] = {Op::sum, Op::max, Op::min};
constexpr std::size_t kCount = 100003;  // odd: the grid-stride loops' tails

#define SKIP_WITHOUT_DEVICE()                                                                          \
  if (device_count() == 0) SP_SKIP_OPTIONAL_PART("gpu", "no CUDA device (or driver) on this machine"); \
  if (::testing::Test::IsSkipped() || ::testing::Test::HasFailure()) return

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes ? bytes : 1), cudaSuccess); }
  ~DeviceBuffer() { cudaFree(p); }
};

// Two ranks' verification patterns, so max and min differ from either input.
std::vector<std::byte> pattern(Dtype d, int rank) {
  std::vector<std::byte> v(kCount * size_of(d));
  fill_pattern(v.data(), kCount, d, rank, 2);
  return v;
}

TEST(GpuReduce, MatchesTheHostReductionForEveryDtypeAndOp) {
  SKIP_WITHOUT_DEVICE();
  for (Dtype d : kDtypes)
    for (Op o : kOps) {
      std::vector<std::byte> a = pattern(d, 0), b = pattern(d, 1), want = a, got(a.size());
      reduce_local(want.data(), b.data(), kCount, d, o);
      DeviceBuffer da(a.size()), db(b.size());
      ASSERT_EQ(cudaMemcpy(da.p, a.data(), a.size(), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(db.p, b.data(), b.size(), cudaMemcpyHostToDevice), cudaSuccess);
      reduce(da.p, db.p, kCount, d, o, nullptr);
      ASSERT_EQ(cudaMemcpy(got.data(), da.p, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0) << name(d) << " " << name(o);
    }
}

TEST(GpuReduce, CountsPlantedMismatches) {
  SKIP_WITHOUT_DEVICE();
  for (Dtype d : kDtypes) {
    std::vector<std::byte> want = pattern(d, 0), got = want;
    const std::size_t es = size_of(d);
    for (std::size_t i : {std::size_t{0}, std::size_t{777}, kCount - 1}) got[i * es] ^= std::byte{1};
    DeviceBuffer dg(got.size()), dw(want.size());
    ASSERT_EQ(cudaMemcpy(dg.p, got.data(), got.size(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dw.p, want.data(), want.size(), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(count_mismatches(dg.p, dw.p, kCount, d, nullptr), 3u) << name(d);
    EXPECT_EQ(count_mismatches(dw.p, dw.p, kCount, d, nullptr), 0u) << name(d);
  }
}

}  // namespace
}  // namespace sp::coll::gpu
