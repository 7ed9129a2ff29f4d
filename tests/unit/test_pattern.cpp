// The harness's pure parts, without MPI: the verification pattern at rank counts too large to
// launch here (no two ranks alike, no short period, every sum exact in its dtype, up to 1024
// ranks), the iteration counts chosen from the message size and the collectives' names.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <vector>

#include "collectives/bf16.hpp"
#include "collectives/bench/harness.hpp"
#include "collectives/collective.hpp"
#include "core/run/error.hpp"

using namespace sp::coll;
// The generator itself, at rank counts too large to launch here (up to 1024).
namespace {
constexpr Dtype kAllDtypes[] = {Dtype::f32, Dtype::f64, Dtype::i32, Dtype::bf16};
long old_pattern(int rank, std::size_t i) { return long((std::size_t(rank) * 7 + i * 3) % 17) - 8; }

std::vector<std::int64_t> first_values(int rank, std::size_t n, Dtype d, int nranks) {
  std::vector<std::int64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern_value(rank, i, d, nranks);
  return v;
}
// The smallest p in [1, max_period] with v[i] == v[i + p] for all i (0 if none).
std::size_t shortest_period(const std::vector<std::int64_t>& v, std::size_t max_period) {
  for (std::size_t p = 1; p <= max_period && p < v.size(); ++p) {
    bool periodic = true;
    for (std::size_t i = 0; i + p < v.size() && periodic; ++i) periodic = v[i] == v[i + p];
    if (periodic) return p;
  }
  return 0;
}
}  // namespace

TEST(Pattern, NoTwoRanksAlikeAndNoShortPeriod) {
  // The old pattern fails both checks: ranks r and r + 17 identical, period 17 in every rank.
  EXPECT_EQ(old_pattern(0, 5), old_pattern(17, 5));
  std::vector<std::int64_t> old(256);
  for (std::size_t i = 0; i < old.size(); ++i) old[i] = old_pattern(3, i);
  EXPECT_EQ(shortest_period(old, 128), 17u);

  constexpr int kRanks = 1024;
  constexpr std::size_t kFirst = 64;
  for (Dtype d : kAllDtypes) {
    std::set<std::vector<std::int64_t>> seen;
    for (int r = 0; r < kRanks; ++r) seen.insert(first_values(r, kFirst, d, kRanks));
    EXPECT_EQ(seen.size(), std::size_t(kRanks))
        << name(d) << ": two of 1024 ranks share their first " << kFirst << " values";
    for (int nranks : {1, 3, 1024})
      for (int r : {0, 1, nranks - 1}) {
        EXPECT_EQ(shortest_period(first_values(r, 2048, d, nranks), 1024), 0u)
            << name(d) << " rank " << r << " of " << nranks;
      }
  }
  // bf16 past 256 ranks keeps the sums exact by making most inputs zero; still no rank all zero.
  EXPECT_EQ(pattern_shape(Dtype::bf16, 1024).groups, 4);
  for (int r = 0; r < kRanks; ++r) {
    std::vector<std::int64_t> v = first_values(r, kFirst, Dtype::bf16, kRanks);
    EXPECT_NE(std::count(v.begin(), v.end(), 0), long(kFirst)) << r;
  }
}

TEST(Pattern, EverySumIsExactInItsDtype) {
  for (Dtype d : kAllDtypes)
    for (int nranks : {1, 2, 3, 5, 17, 255, 256, 257, 1000, 1024}) {
      const PatternShape sh = pattern_shape(d, nranks);
      EXPECT_GE(sh.amplitude, 1);
      for (std::size_t i = 0; i < 300; ++i) {
        // The bound behind exactness in any order: the sum of magnitudes stays within E.
        std::int64_t magnitudes = 0, exact = 0;
        for (int r = 0; r < nranks; ++r) {
          std::int64_t v = pattern_value(r, i, d, nranks);
          ASSERT_LE(std::abs(v), sh.amplitude);
          magnitudes += std::abs(v);
          exact += v;
        }
        ASSERT_LE(magnitudes, exact_integer_bound(d)) << name(d) << " " << nranks << " ranks, element " << i;
        ASSERT_EQ(exact, expected_value(i, d, Op::sum, nranks));
        if (d != Dtype::bf16) continue;
        // And the bf16 additions themselves, forwards, backwards and as a pairwise tree.
        std::vector<std::uint16_t> in(static_cast<std::size_t>(nranks));
        for (int r = 0; r < nranks; ++r) in[std::size_t(r)] = float_to_bf16(float(pattern_value(r, i, d, nranks)));
        auto add = [](std::uint16_t a, std::uint16_t b) { return float_to_bf16(bf16_to_float(a) + bf16_to_float(b)); };
        std::uint16_t fwd = in.front(), bwd = in.back();
        for (std::size_t k = 1; k < in.size(); ++k) fwd = add(fwd, in[k]);
        for (std::size_t k = in.size() - 1; k-- > 0;) bwd = add(bwd, in[k]);
        std::vector<std::uint16_t> tree = in;
        while (tree.size() > 1) {
          std::vector<std::uint16_t> next;
          for (std::size_t k = 0; k + 1 < tree.size(); k += 2) next.push_back(add(tree[k], tree[k + 1]));
          if (tree.size() % 2) next.push_back(tree.back());
          tree = next;
        }
        ASSERT_EQ(bf16_to_float(fwd), float(exact)) << nranks << " ranks, element " << i;
        ASSERT_EQ(bf16_to_float(bwd), float(exact)) << nranks << " ranks, element " << i;
        ASSERT_EQ(bf16_to_float(tree.front()), float(exact)) << nranks << " ranks, element " << i;
      }
    }
  // The old bf16 amplitude was 256 / ranks clamped to at least 1: 1024 ranks of values in [-1, 1]
  // could sum to 1024 in magnitude, past bf16's exact integers.
}

TEST(Harness, IterationCountsAdaptToSize) {
  EXPECT_EQ(auto_iters(8), 1000);
  EXPECT_EQ(auto_iters(1 << 20), 256);
  EXPECT_EQ(auto_iters(1u << 30), 10);
  EXPECT_EQ(auto_warmup(1000), 100);
  EXPECT_EQ(auto_warmup(10), 2);
}

// -c takes the peers' spellings (nccl-tests, OSU, IMB) and resolves each to one of ours.
TEST(Harness, CollectiveNamesTakeThePeersSpellings) {
  EXPECT_EQ(find_collective("all_to_all").id, Collective::all_to_all);
  EXPECT_EQ(find_collective("alltoall").id, Collective::all_to_all);                  // nccl-tests, OSU
  EXPECT_EQ(find_collective("Alltoallv").id, Collective::all_to_allv);                // IMB
  EXPECT_EQ(find_collective("allgather").id, Collective::all_gather);                 // OSU
  EXPECT_EQ(find_collective("bcast").id, Collective::broadcast);                      // OSU, MPI
  EXPECT_EQ(find_collective("Reduce_scatter_block").id, Collective::reduce_scatter);  // IMB
  EXPECT_EQ(find_collective("all_reduce").id, Collective::allreduce);                 // nccl-tests
  EXPECT_EQ(find_collective("REDUCE").id, Collective::reduce);
  EXPECT_THROW(find_collective("alltoallw"), sp::Error);
  EXPECT_THROW(find_collective("gather"), sp::Error);
  EXPECT_THROW(find_collective(""), sp::Error);
}
